"""The gRPC service: a thin grpc.aio adapter around the rules engine.

``BUILD`` says whether the wire encoder runs compiled (mypyc) or from its source, and why
(see ``_build.py``).
"""

from ._build import choose as _choose_build

_compiled, BUILD = _choose_build()
