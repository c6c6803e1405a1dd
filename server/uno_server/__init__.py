"""UNO Arena: a gRPC UNO service for bots, its rules engine and its tools."""

from importlib.metadata import PackageNotFoundError, version

from . import _transport

# before any module of the package imports grpc: gRPC reads this once (see _transport)
_transport.apply()
_transport.quiet_core()

try:
    __version__ = version("uno-arena")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+source"
