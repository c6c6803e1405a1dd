"""Sit at the table and watch it: ``uno-arena play`` and ``uno-arena watch``.

* :mod:`.model` keeps the table as one viewer may know it, built only from the protocol's events
  (and, for a seat, its own ``SeatView``). The terminal views and the web view share it.
* :mod:`.describe` puts every event into words.
* :mod:`.human` is the person's seat: an ordinary bot of the Python SDK whose decisions come
  from the keyboard. There is no side door into the server.
* :mod:`.practice` is the AI that fills the other seats of a table the client hosts, also an SDK
  bot: it plays like the engine's heuristic bot but reacts at a human pace in UNO windows.
* :mod:`.app` is the Textual play screen, :mod:`.watch` the spectator screens, :mod:`.cli` the
  two commands.
"""
