"""The reduced ``make bench-load`` (issue 9): 50 concurrent tables of connected bots in another
process, 500 finished matches, and the server's memory does not grow from the 250th to the
500th finished match. Finished matches are kept within the retention (here 100), so once it is
full every new summary replaces an old one; without retention the server grew about 0.64 MB per
finished match (issue 9, item 3).
"""

from __future__ import annotations

import argparse

from uno_server.benchmarks import load


def test_a_reduced_soak_frees_finished_matches() -> None:
    args = argparse.Namespace(
        tables=50,
        bots=4,
        processes=1,
        seconds=0.0,
        matches=250,
        hand_size=4,
        retain_matches=100,
    )
    r = load.run(args)
    assert r["errors"] == 0, r["why"][:10]
    assert r["finished"] >= 500
    assert r["rss_first"] > 0 and r["rss_second"] > 0
    # steady state: growth within 10% of the RSS (250 more matches without retention: ~160 MB)
    assert r["growth"] < 0.10 * r["rss_first"], r
    assert r["p99_ms"] > 0
