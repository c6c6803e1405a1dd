"""Regenerate the README's screenshots (``make screenshots``): the terminal play screen, the
terminal watch screen of a tournament's tables, and the web view of one table. Terminal screens
are exported by Textual as SVG and rendered to PNG by the same headless Chromium the browser
test uses; the web view is captured straight from the page.

    python -m tests.web.make_screenshots [OUT_DIR]       (default deploy/screenshots)
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path

from tests.play.live import ADMIN, live_server
from tests.play.scenario import AI_SEED, SEED, HumanScript
from tests.play.test_play_screen import keys_for, next_decision
from uno_server.gen.uno.v1 import game_pb2
from uno_server.play.app import PlayApp
from uno_server.play.practice import SCRIPTED
from uno_server.play.session import PlayOptions
from uno_server.play.watch import WatchApp
from uno_server.play.wire import engine_view
from uno_server.web import WebView

from .cdp import Page, chromium

OUT = Path(__file__).resolve().parents[2] / "deploy" / "screenshots"
HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC
RANDOM = game_pb2.BUILTIN_BOT_RANDOM


def _svg_size(svg: str) -> tuple[int, int]:
    m = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
    assert m, "no viewBox in the SVG"
    return int(float(m.group(1))) + 1, int(float(m.group(2))) + 1


async def svg_to_png(page: Page, svg: str, out: Path) -> None:
    svg = re.sub(r"@font-face \{[^}]*\}", "", svg)  # fonts from a CDN: use the local mono
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False) as f:
        f.write(svg)
    width, height = _svg_size(svg)
    await page.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )
    await page.goto(f"file://{f.name}")
    await asyncio.sleep(0.5)
    await page.screenshot(out, width, height)
    Path(f.name).unlink()


async def play_svg() -> str:
    """The play screen right after the person caught a bluffed Wild Draw Four."""
    app = PlayApp(
        PlayOptions(practice=True, seed=SEED, dealer=0, ai_style=SCRIPTED, ai_seed=AI_SEED)
    )
    script = HumanScript()
    async with app.run_test(size=(120, 42)) as pilot:
        while await next_decision(app, pilot):
            model = app.model
            if model is not None and model.evidence is not None and model.evidence.bluff:
                await pilot.pause(0.2)
                svg = app.export_screenshot(title="uno-arena play --practice")
                await pilot.press("q")
                return svg
            d = app.decision
            assert d is not None
            choice = script.choose(engine_view(d.request))
            assert choice is not None
            for key in keys_for(app, choice):
                await pilot.press(key)
    raise RuntimeError("the scripted hand showed no evidence")


async def watch_and_web(page: Page, out: Path) -> str:
    """Three tables of a tournament held mid-hand: the terminal tables view (SVG returned) and
    one table in the browser (written to out/web.png)."""
    async with live_server(hold_at=5) as live:
        labels = {"tournament": "spring"}
        mids = []
        tables: list[tuple[list[str | int], int]] = [
            (["gate", HEURISTIC, RANDOM, HEURISTIC], 41),
            ([HEURISTIC, "gate", RANDOM, HEURISTIC], 42),
            ([RANDOM, HEURISTIC, "gate", HEURISTIC], 43),
        ]
        for table, (seats, seed) in enumerate(tables, start=1):
            mids.append(await live.create(seats, seed=seed, labels={**labels, "table": str(table)}))
        while sum(len(live.table(m).records) > 0 for m in mids) < 3 or not live.gate.held.is_set():
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # every table reaches the gate
        app = WatchApp(live.addr, ADMIN, labels=labels, poll_s=0.1)
        async with app.run_test(size=(120, 30)) as pilot:
            while len(app.query(".card")) < 3 or not all(
                f.caught_up for f in app.followers.values()
            ):
                await pilot.pause(0.05)
            await pilot.pause(0.5)
            svg = app.export_screenshot(title="uno-arena watch --tournament spring")
            await pilot.press("q")
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            await page.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": 1100, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            )
            await page.goto(f"http://127.0.0.1:{view.port}/#/match/{mids[0]}")
            await page.wait_for("!!document.getElementById('table')")
            await asyncio.sleep(0.5)
            await page.screenshot(out / "web.png", 1100, 900)
        finally:
            await view.stop()
    return svg


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    play = await play_svg()
    async with chromium() as page:
        watch = await watch_and_web(page, out)
        await svg_to_png(page, play, out / "play.png")
        await svg_to_png(page, watch, out / "watch.png")
    for name in ("play.png", "watch.png", "web.png"):
        print(f"wrote {out / name} ({(out / name).stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
