"""Issue 22: the README stays a newcomer's page (about 250 lines) and links every topic page
under docs/, and each page opens with what a reader can do with it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md"))


def test_the_readme_stays_short_and_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text()
    assert readme.count("\n") <= 260, "README.md grew past about 250 lines: move a topic to docs/"
    linked = set(re.findall(r"\(docs/([\w-]+\.md)", readme))
    assert PAGES, "no pages under docs/"
    missing = [p.name for p in PAGES if p.name not in linked]
    assert not missing, f"README.md links none of {missing}"


def test_each_page_opens_with_what_a_reader_can_do() -> None:
    for page in PAGES:
        lines = [ln for ln in page.read_text().splitlines() if ln.strip()]
        assert lines[0].startswith("# "), page.name
        assert lines[1].startswith("What you can do with this page:"), page.name
