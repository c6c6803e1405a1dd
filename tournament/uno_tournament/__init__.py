"""UNO Arena tournament harness: scheduling, running and rating bot tournaments.

``BUILD`` says whether the runner's wire reader (``wirejson.py``) runs compiled (mypyc) or from
its source, and why (see ``_build.py``).
"""

from ._build import choose as _choose_build

_compiled, BUILD = _choose_build()
