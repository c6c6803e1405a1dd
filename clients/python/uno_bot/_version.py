"""The SDK's version: the one place it is written (Hello.bot_version carries it, and
``uno_bot.__version__`` is this)."""

__version__ = "0.2.0"
