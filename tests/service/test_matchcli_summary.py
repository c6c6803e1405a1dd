"""``uno-arena match``'s summary: timeouts, faults, late answers and takeovers are separate
columns, each from its own MatchSeat field (issue 21: timeouts and rejections were one number
and takeovers were not shown)."""

from __future__ import annotations

from uno_server.gen.uno.v1 import admin_pb2
from uno_server.service.matchcli import SeatTally, summary_lines


def test_each_kind_of_trouble_has_its_own_column() -> None:
    tallies = [SeatTally() for _ in range(4)]
    matches = [
        # (strikes, rejected, stale, taken over) per seat
        [(0, 0, 0, False), (1, 0, 0, False), (0, 2, 0, False), (0, 0, 5, False)],
        [(0, 0, 0, False), (3, 0, 0, True), (0, 1, 0, False), (0, 0, 2, False)],
    ]
    for seats in matches:
        for i, (strikes, rejected, stale, taken) in enumerate(seats):
            tallies[i].add(
                admin_pb2.MatchSeat(
                    seat=i,
                    strikes=strikes,
                    rejected_actions=rejected,
                    stale_actions=stale,
                    taken_over=taken,
                )
            )
    tallies[0].wins = 2
    lines = summary_lines(["mybot", "slow", "wrong", "late"], tallies)
    header = lines[-5].split()
    assert header == ["seat", "player", "wins", "timeouts", "faults", "late", "takeovers"]
    rows = {ln.split()[1]: [int(x) for x in ln.split()[2:]] for ln in lines[-4:]}
    assert rows == {
        "mybot": [2, 0, 0, 0, 0],
        "slow": [0, 4, 0, 0, 1],  # timeouts and a takeover, no faults
        "wrong": [0, 0, 3, 0, 0],  # faults only
        "late": [0, 0, 0, 7, 0],  # late answers are not faults
    }
    legend = " ".join(lines[:-5])
    assert "not faults" in legend and "strikes" in legend
