"""The byte-level DFA the engine walks, and its construction from an NFA.

Layout: `byte_classes` maps each byte to an equivalence class; `table[state, class]` is the next
state or -1 (dead). States that cannot reach an accepting state are removed, so "not dead" means
"a viable prefix": exactly the test the token index needs. State 0 is the start.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from ..errors import EmptyLanguageError, LimitExceededError
from ..limits import Limits
from .nfa import NFA

DEAD = -1


class DFA:
    """An immutable minimal byte DFA; safe to share between threads."""

    __slots__ = ("byte_classes", "call_classes", "table", "accepting", "minimal", "_rows", "_forced", "_classes_list")

    def __init__(
        self,
        byte_classes: np.ndarray,
        table: np.ndarray,
        accepting: np.ndarray,
        call_classes: Optional[np.ndarray] = None,
    ) -> None:
        """`call_classes[k]` is the column of a call of rule k (rule DFAs only; see rules.py)."""
        self.byte_classes = np.ascontiguousarray(byte_classes, dtype=np.int32)
        self.table = np.ascontiguousarray(table, dtype=np.int32)
        self.accepting = np.ascontiguousarray(accepting, dtype=np.bool_)
        self.call_classes = np.ascontiguousarray(
            call_classes if call_classes is not None else np.zeros(0), dtype=np.int32
        )
        for arr in (self.byte_classes, self.table, self.accepting, self.call_classes):
            arr.setflags(write=False)
        if self.byte_classes.shape != (256,) or self.table.ndim != 2:
            raise ValueError("malformed DFA arrays")
        if self.table.shape[0] != self.accepting.shape[0] or self.table.shape[0] == 0:
            raise ValueError("malformed DFA arrays")
        if self.table.size and (self.table.max() >= self.n_states or self.table.min() < DEAD):
            raise ValueError("DFA table points outside its states")
        if self.byte_classes.min() < 0 or self.byte_classes.max() >= self.table.shape[1]:
            raise ValueError("DFA byte classes out of range")
        if self.call_classes.size and (self.call_classes.min() < 0 or self.call_classes.max() >= self.table.shape[1]):
            raise ValueError("DFA call classes out of range")
        self.minimal = False  # known to be minimal and canonically numbered (see minimize)
        self._rows: Optional[list[list[int]]] = None
        self._classes_list = self.byte_classes.tolist()
        self._forced: dict[int, bytes] = {}

    @property
    def n_states(self) -> int:
        return int(self.table.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.table.shape[1])

    def _python_rows(self) -> list[list[int]]:
        rows = self._rows
        if rows is None:
            rows = self.table.tolist()
            self._rows = rows
        return rows

    def walk(self, state: int, data: bytes) -> int:
        """State after reading `data` from `state`, or DEAD."""
        rows = self._python_rows()
        classes = self._classes_list
        for b in data:
            state = rows[state][classes[b]]
            if state < 0:
                return DEAD
        return state

    def is_accepting(self, state: int) -> bool:
        return bool(self.accepting[state])

    def accepts(self, data: bytes) -> bool:
        """Is `data`, read from the start state, in the language?"""
        state = self.walk(0, data)
        return state >= 0 and bool(self.accepting[state])

    def forced_bytes(self, state: int) -> bytes:
        """Bytes every continuation from `state` must start with (stops where the DFA may end)."""
        cached = self._forced.get(state)
        if cached is not None:
            return cached
        rows = self._python_rows()
        out = bytearray()
        s = state
        seen = {s}
        while not self.accepting[s]:
            live = [c for c, t in enumerate(rows[s]) if t >= 0]
            if len(live) != 1:
                break
            members = [b for b in range(256) if self._classes_list[b] == live[0]]
            if len(members) != 1:
                break
            out.append(members[0])
            s = rows[s][live[0]]
            if s in seen:
                break
            seen.add(s)
        result = bytes(out)
        self._forced[state] = result
        return result


def determinize(nfa: NFA, limits: Limits, deadline: Optional[float] = None, n_calls: int = 0) -> DFA:
    """Subset construction over byte classes (numba, see subset.py), then trimming and
    minimization. Subsets hold only the NFA states that matter (those with byte edges, and the
    final state), so epsilon-only states neither cost time nor split DFA states."""
    from . import subset

    rows, set_ptr, set_data, cnt, classes = _subsets(nfa, limits, deadline, n_calls)
    merged, table, accepting, start_live = subset.finish(rows, set_ptr, set_data, cnt, nfa.final, classes)
    return _minimal_dfa(merged, table, accepting, start_live, n_calls)


def check_subsets(nfa: NFA, limits: Limits, n_calls: int = 0) -> None:
    """Raise what determinize would raise for a limit (states, time), without minimizing."""
    _subsets(nfa, limits, None, n_calls)


def _subsets(nfa: NFA, limits: Limits, deadline: Optional[float], n_calls: int) -> tuple:
    from . import subset  # numba loads on the first compile, not on import

    deadline = deadline if deadline is not None else time.perf_counter() + limits.max_compile_seconds
    e_ptr, e_clo, e_chi, e_dst, eps_ptr, eps_dst, important, classes = subset.prepare(
        nfa.n_states, nfa.edge_array(), nfa.eps_array(), nfa.final, 256 + n_calls
    )
    rows, set_ptr, set_data, slots, stamp = subset.start(int(classes[-1]) + 1, nfa.start, eps_ptr, eps_dst, important)
    k, cnt = 0, 1
    while True:
        rows, set_ptr, set_data, slots, k, cnt, status = subset.expand(
            e_ptr, e_clo, e_chi, e_dst, eps_ptr, eps_dst, important,
            rows, set_ptr, set_data, slots, stamp, k, cnt, k + 1024, limits.max_dfa_states,
        )
        if status == subset.TOO_MANY:
            raise LimitExceededError("DFA size (states)", limits.max_dfa_states, "Limits(max_dfa_states=...)")
        if time.perf_counter() > deadline:
            raise LimitExceededError(
                "compile time (s)", limits.max_compile_seconds, "Limits(max_compile_seconds=...)"
            )
        if status == subset.DONE:
            return rows, set_ptr, set_data, cnt, classes


def minimize(classes: np.ndarray, table: np.ndarray, accepting: np.ndarray, n_calls: int = 0) -> DFA:
    """Drop dead states, merge equivalent ones, renumber in BFS order from the start state.
    Identical columns are merged first (fewer transitions to refine), then those that merging
    states made identical; either way the first occurrence keeps the lower id."""
    from .minimize import minimal  # numba loads lazily

    # Writable C arrays whatever the caller passes (a DFA's own arrays are read-only): one
    # numba specialization to load, not one per combination of flags.
    merged, new_table, new_acc, start_live = minimal(
        np.require(classes, np.int32, ("C", "W")),
        np.require(table, np.int32, ("C", "W")),
        np.require(accepting, np.bool_, ("C", "W")),
    )
    return _minimal_dfa(merged, new_table, new_acc, start_live, n_calls)


def _minimal_dfa(merged: np.ndarray, table: np.ndarray, accepting: np.ndarray, start_live: bool, n_calls: int) -> DFA:
    """The DFA of minimize.minimal's results, whose arrays are well formed by construction
    (no validation pass: rule grammars build thousands of small DFAs)."""
    if not start_live:
        raise EmptyLanguageError("the pattern matches no string at all (its language is empty)")
    calls = merged[256:] if n_calls else np.zeros(0, dtype=np.int32)
    return trusted_dfa(merged[:256], calls, table, accepting, minimal=True)


def trusted_dfa(byte_classes: np.ndarray, call_classes: np.ndarray, table: np.ndarray, accepting: np.ndarray,
                minimal: bool) -> DFA:
    """A DFA of arrays a kernel made well formed (int32 classes and table, bool accepting; no
    validation pass, whose reductions cost more than small DFAs do). Keeps `table` and
    `accepting` (made read-only), copies the classes. A table not in C order is copied into it:
    the mask kernels are compiled for C-ordered tables, and an F-ordered one (a column gather's
    result) made numba load a second version of them inside a mask (~18 ms)."""
    dfa = DFA.__new__(DFA)
    dfa.byte_classes = np.array(byte_classes, dtype=np.int32)
    dfa.call_classes = np.array(call_classes, dtype=np.int32)
    table, accepting = np.ascontiguousarray(table), np.ascontiguousarray(accepting)
    dfa.table, dfa.accepting = table, accepting
    for arr in (dfa.byte_classes, dfa.call_classes, table, accepting):
        arr.setflags(write=False)
    dfa.minimal = minimal
    dfa._rows = None
    dfa._classes_list = dfa.byte_classes.tolist()
    dfa._forced = {}
    return dfa
