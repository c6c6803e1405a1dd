"""The gRPC service: a thin grpc.aio adapter around the rules engine.

``BUILD`` says whether the per-move modules (the wire encoder, the table and the rest listed in
``_build.COMPILED_MODULES``) run compiled (mypyc) or from their sources, and why
(see ``_build.py``).
"""

from ._build import choose as _choose_build

_compiled, BUILD = _choose_build()
