"""The example Java bot's jar is built reproducibly.

``tournament resume`` compares each bot's program with the one its run started with (a digest of
every file its command names), so a jar whose bytes change on every build made a rebuilt but
unchanged example bot "a changed program" and its run could not be resumed. With
``project.build.outputTimestamp`` in clients/java/pom.xml, Maven stamps every entry it writes
with that instant instead of the build's time; the dependencies' entries keep their own.
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile

from .langs import ready


def test_the_example_jar_stamps_its_own_entries_with_the_poms_fixed_time() -> None:
    java = ready("java")
    pom = (java.folder / "pom.xml").read_text(encoding="utf-8")
    m = re.search(r"<project\.build\.outputTimestamp>([^<]+)<", pom)
    assert m, "clients/java/pom.xml sets no project.build.outputTimestamp"
    fixed = dt.datetime.fromisoformat(m.group(1).replace("Z", "+00:00")).replace(tzinfo=None)
    jars = sorted((java.folder / "target").glob("*-jar-with-dependencies.jar"))
    assert jars, "the Java build wrote no jar-with-dependencies"
    with zipfile.ZipFile(jars[-1]) as z:
        ours = [i for i in z.infolist() if i.filename.startswith(("uno/", "META-INF/MANIFEST"))]
    assert len(ours) > 50  # the generated stubs, the SDK and the example bot
    stamps = {dt.datetime(*i.date_time) for i in ours}
    # one stamp for all of them, the pom's (a zip keeps local time: allow any time zone's shift)
    assert len(stamps) == 1, sorted(stamps)[:5]
    assert abs(stamps.pop() - fixed) <= dt.timedelta(hours=14)
