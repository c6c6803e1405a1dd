"""Our dashboards survive a round trip through Grafana's own schema (grafana-foundation-sdk,
the models Grafana's tooling generates from it): every key we write is read back with the same
value. Issue 21: ``templating.list[].definition`` and a repeated panel's ``maxPerRow`` were
dropped, so anyone editing the dashboards with Grafana's tooling silently lost them."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from grafana_foundation_sdk.cog import plugins
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "deploy" / "grafana" / "dashboards"
FILES = sorted(FOLDER.glob("*.json"))

plugins.register_default_plugins()  # panel options and queries by panel and datasource type


def _generated() -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location(
        "uno_dashboards", ROOT / "deploy/grafana/dashboards.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return dict(mod.dashboards())


def round_trip(model: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(Dashboard.from_json(model), cls=JSONEncoder))


def lost(ours: Any, back: Any, path: str = "") -> list[str]:
    """Every key of ``ours`` missing from ``back`` or read back with another value (keys the
    schema adds with its defaults are not a loss)."""
    if isinstance(ours, dict):
        if not isinstance(back, dict):
            return [f"{path}: {json.dumps(ours)[:60]} became {json.dumps(back)[:60]}"]
        out: list[str] = []
        for key, value in ours.items():
            if key not in back:
                out.append(f"{path}.{key}: dropped")
            else:
                out += lost(value, back[key], f"{path}.{key}")
        return out
    if isinstance(ours, list):
        if not isinstance(back, list) or len(back) != len(ours):
            return [f"{path}: a list of {len(ours)} became {json.dumps(back)[:60]}"]
        return [
            x
            for i, (a, b) in enumerate(zip(ours, back, strict=True))
            for x in lost(a, b, f"{path}[{i}]")
        ]
    return (
        [] if ours == back and type(ours) is type(back) else [f"{path}: {ours!r} became {back!r}"]
    )


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_a_dashboard_loses_nothing_on_a_round_trip(path: Path) -> None:
    ours = json.loads(path.read_text())
    back = round_trip(ours)
    assert lost(ours, back) == []
    assert round_trip(back) == back  # and the schema's own form is stable


def test_the_generator_writes_what_round_trips() -> None:
    """dashboards.py (``make dashboards``) is the source; what it generates round-trips too, and
    the committed files are what it generates."""
    models = _generated()
    assert sorted(models) == [p.name for p in FILES]
    for name, model in models.items():
        assert json.loads((FOLDER / name).read_text()) == model, f"{name}: run make dashboards"
        assert lost(model, round_trip(model)) == [], name


def test_the_check_finds_a_dropped_key() -> None:
    """The comparison itself: a key outside the schema is reported, as is a changed value."""
    ours = json.loads(FILES[0].read_text())
    ours["templating"]["list"][0]["definition"] = "label_values(x, y)"
    ours["panels"][1]["maxPerRow"] = 3
    found = lost(ours, round_trip(ours))
    assert ".templating.list[0].definition: dropped" in found
    assert ".panels[1].maxPerRow: dropped" in found
    assert lost({"a": 1, "b": [1, 2]}, {"a": 2, "b": [1]}) == [
        ".a: 1 became 2",
        ".b: a list of 2 became [1]",
    ]
