"""A standing league (issue 26): bot authors submit bots and new versions; each is built in
the sandbox and gated before it enters the ladder.

Built so far: the manifest (:mod:`.manifest`), the league's records (:mod:`.store`),
submission with its sandboxed build and its gate (:mod:`.submit`), matchmaking
(:mod:`.matchmaking`), and ``uno-arena league
init|submit|token add|status`` (:mod:`.cli`). Not yet: ``league run`` (the ladder's play,
scheduling, ratings over time), remote bots' first-connection gate, the report and the web view.
"""
