"""Process-wide memos, and emptying them.

Pure functions of immutable inputs keep their results in `functools.lru_cache`s at module level:
rule DFAs (automata/rules.py), regex languages, JSON Schema pieces, vocabulary indexes. They are
shared by every Compiler in the process, so a Compiler's own `clear_cache()` leaves them;
`constrain.clear_cache()` (every cache in the process) empties them too.
"""

from __future__ import annotations

import sys


def clear_memos() -> int:
    """Empty every module-level lru_cache defined in constrain's loaded modules; returns how many."""
    cleared = 0
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "constrain" or name.startswith("constrain.")):
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and getattr(value, "__module__", None) == name:
                clear()
                cleared += 1
    return cleared
