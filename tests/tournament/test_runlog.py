"""Issue 21, item 5: the runner has a JSON log of its own, beside the server's, with the
tournament, the shard and the bot bound; crashes, restarts, give-ups and the run's start and end
go there."""

from __future__ import annotations

import json
from pathlib import Path

from uno_server.cli import main as cli_main

from .helpers import bot_entry, write_config

CRASHY = Path(__file__).with_name("crashy_bot.py")


def test_crashes_restarts_and_give_ups_go_to_the_runner_s_json_log(tmp_path: Path) -> None:
    crashy = (
        '[[bots]]\nname = "crashy"\n'
        f'command = ["{{python}}", "{CRASHY}", "--crash-after", "5", "--log-level", "warning"]\n'
    )
    cfg = write_config(
        tmp_path,
        [bot_entry("h0"), bot_entry("h1"), bot_entry("h2"), crashy],
        name="logs",
        # the sandbox would hide this test folder (crashy_bot.py) from the bot
        extra="max_restarts = 1\n[time_control]\nreconnect_grace_ms = 300\n"
        "[sandbox]\nenabled = false\n",
    )
    out = tmp_path / "out"
    assert cli_main(["tournament", "run", str(cfg), "--quiet"]) == 0
    path = out / "logs" / "tournament.log"
    assert (out / "logs" / "server.log").is_file()  # beside the server's log
    lines = path.read_text().splitlines()
    events = [json.loads(ln) for ln in lines]  # every line is one JSON object
    tid = json.loads((out / "results.json").read_text())["tournament_id"]
    assert all(e["tournament"] == tid and e["shard"] == "0/1" for e in events)
    assert all({"event", "level", "timestamp", "pid"} <= e.keys() for e in events)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "run started" and kinds[-1] == "run finished"
    crashed = [e for e in events if e["event"] == "bot crashed"]
    assert crashed and all(e["bot"] == "crashy" and e["level"] == "warning" for e in crashed)
    assert crashed[0]["detail"]  # how it exited
    assert any(e["event"] == "bot restarted" and e["bot"] == "crashy" for e in events)
    given = [e for e in events if e["event"] == "bot given up"]
    assert len(given) == 1 and given[0]["bot"] == "crashy"
    assert kinds.index("bot crashed") < kinds.index("bot restarted") < kinds.index("bot given up")
    done = events[-1]
    assert done["stored"] == done["planned"] == 24
