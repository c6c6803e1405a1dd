"""A standing league (issue 26): bot authors submit bots and new versions; each is built in
the sandbox and gated before it enters the ladder, which plays until stopped.

The manifest (:mod:`.manifest`), the league's records (:mod:`.store`), submission with its
sandboxed build and its gate (:mod:`.submit`), matchmaking (:mod:`.matchmaking`), the ladder's
play (:mod:`.run`), ratings over time and new-version verdicts (:mod:`.ratings`), and
``uno-arena league init|submit|token add|run|status`` (:mod:`.cli`). Not yet: remote bots'
first-connection gate, the live web standings.
"""
