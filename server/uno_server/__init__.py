"""UNO Arena: a gRPC UNO service for bots, its rules engine and its tools."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("uno-arena")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+source"
