"""What a frame can read first, before any byte: the bytes its closure's stacks read.

A frame (rule class, state) closes before each byte: it calls its callees at their starts, and
where a callee can return at once, reads on from the callee's return state. One analysis per
(rule class, state), shared by three questions of frame_summaries.py: which nodes of an item a
frame may read from (`starts`: none where the frame itself can return first, for then what lies
below reads too), how much of the trie a walk from an item could visit (`reachable`), and
whether a frame reads none of an item's bytes at all (`closure`: then no walk is needed).
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ..automata.rules import RuleSet


class FirstReads:
    """Memoized per (rule class, state); `reads(rep, q)` is a state's own bool-per-byte row."""

    def __init__(self, rules: RuleSet, reads: Callable[[int, int], np.ndarray]) -> None:
        self.rules = rules
        self.reads = reads
        self._closures: dict[tuple[int, int], Optional[tuple[np.ndarray, bool]]] = {}

    def closure(self, rep: int, q: int) -> Optional[tuple[np.ndarray, bool]]:
        """(bool per byte: what any stack of the frame's closure can read first, that is rule
        class `rep` in state q, its callees from their starts, and `rep` again after a callee
        that can return before reading; whether the frame itself can return before reading),
        or None where a cycle of such returns makes it unknown (then a walk decides)."""
        key = (rep, q)
        if key in self._closures:
            return self._closures[key]
        self._closures[key] = None  # (met again before it is known: a cycle, unknown)
        rule = self.rules.rule(rep)
        reads = self.reads(rep, q).copy()
        pops = bool(rule.dfa.accepting[q])
        out: Optional[tuple[np.ndarray, bool]] = None
        for k, t in rule.calls[q]:
            callee = self.closure(self.rules.same[k], 0)
            if callee is None:
                break
            reads |= callee[0]
            if callee[1]:  # (the callee can return at once: the frame reads on from t)
                after = self.closure(rep, t)
                if after is None:
                    break
                reads |= after[0]
                pops = pops or after[1]
        else:
            out = (reads, pops)
        self._closures[key] = out
        return out

    def starts(self, rep: int, q: int = 0) -> Optional[np.ndarray]:
        """Bool per byte: what the frame can read first; None where it can return before
        reading (then what lies below reads too) or where that is not known."""
        found = self.closure(rep, q)
        return None if found is None or found[1] else found[0]

    def reachable(self, rep: int, q: int) -> np.ndarray:
        """Bool per byte: what the frame's closure can read first, whether or not the frame
        can return first (for a walk's cost); every byte where that is not known."""
        found = self.closure(rep, q)
        # (a new writable array: the numba size check was compiled for one; read-only, it would compile again)
        return np.ones(256, dtype=np.bool_) if found is None else found[0]
