"""Example bots: ``random_bot`` and ``heuristic_bot`` (``python -m uno_bot.examples.<name>``)."""
