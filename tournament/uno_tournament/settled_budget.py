"""What a settled run's budget allows, said the same way by the start line, the progress line
and the reports.

An examination ran ``until = "settled"`` with ``max_hands = 24``: the start line said
"sequential test: waiting for the first look" while the docs and the stored report said no look
comes within a budget of 24 hands (the first look needs 96 hands of every bot).
"""

from __future__ import annotations

from typing import Any


def no_look_note(rec: Any) -> str:
    """``"no look within the budget of N hands (...)"`` when a settled run's budget (its
    :class:`~uno_tournament.settled_run.SequentialRecord` ``rec``) is too small for any look,
    else ''."""
    st = rec.state
    if st is None or rec.kind != "settled":
        return ""
    seats = 4 * rec.plan_hands  # a hand seats four bots: the most hands all bots can have
    if rec.plan_hands >= st.min_hands_per_bot and seats >= len(st.bots) * st.min_hands_per_bot:
        return ""
    return (
        f"no look within the budget of {rec.plan_hands} hands (the first look needs "
        f"{st.min_hands_per_bot} hands of every bot)"
    )
