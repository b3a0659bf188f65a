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

    __slots__ = ("byte_classes", "call_classes", "table", "accepting", "_rows", "_forced", "_classes_list")

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


def _byte_classes(nfa: NFA, alphabet: int = 256) -> tuple[np.ndarray, list[int]]:
    """Partition the alphabet (bytes, then call symbols) into intervals no edge splits; returns
    (class per symbol, class starts). Bytes and calls never share a class."""
    cuts = {0, 256, alphabet}
    for edges in nfa.edges:
        for lo, hi, _ in edges:
            cuts.add(lo)
            cuts.add(hi + 1)
    starts = sorted(cuts)[:-1]
    classes = np.searchsorted(np.array(starts), np.arange(alphabet), side="right") - 1
    return classes.astype(np.int32), starts


def _closures(nfa: NFA) -> list[int]:
    """Epsilon closure of every NFA state as an int bitset (iterative, memo-free Tarjan-less DFS)."""
    n = nfa.n_states
    out = [0] * n
    eps = nfa.eps
    for s in range(n):
        if not eps[s]:
            out[s] = 1 << s
            continue
        seen = 1 << s
        stack = [s]
        while stack:
            u = stack.pop()
            for v in eps[u]:
                bit = 1 << v
                if not seen & bit:
                    seen |= bit
                    stack.append(v)
        out[s] = seen
    return out


def _members(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def determinize(nfa: NFA, limits: Limits, deadline: Optional[float] = None, n_calls: int = 0) -> DFA:
    """Subset construction over byte classes, then trimming and minimization.

    Subsets hold only the NFA states that matter (those with byte edges, and the final state),
    so epsilon-only states neither cost time nor split DFA states."""
    t0 = time.perf_counter()
    deadline = deadline if deadline is not None else t0 + limits.max_compile_seconds
    classes, starts = _byte_classes(nfa, 256 + n_calls)
    n_cls = len(starts)
    class_of = classes.tolist()
    important = 1 << nfa.final
    for s_idx, edges in enumerate(nfa.edges):
        if edges:
            important |= 1 << s_idx
    closure = [c & important for c in _closures(nfa)]
    moves: list[list[tuple[int, int, int]]] = [
        [(class_of[lo], class_of[hi], closure[t]) for lo, hi, t in edges] for edges in nfa.edges
    ]
    final_bit = 1 << nfa.final
    start = closure[nfa.start]
    index = {start: 0}
    order = [start]
    rows: list[list[int]] = []
    max_states = limits.max_dfa_states
    k = 0
    while k < len(order):
        if k & 63 == 0 and time.perf_counter() > deadline:
            raise LimitExceededError(
                "compile time (s)", limits.max_compile_seconds, "Limits(max_compile_seconds=...)"
            )
        targets: dict[int, int] = {}
        for m in _members(order[k]):
            for c_lo, c_hi, tgt in moves[m]:
                for c in range(c_lo, c_hi + 1):
                    targets[c] = targets.get(c, 0) | tgt
        row = [DEAD] * n_cls
        for c, t in targets.items():
            j = index.get(t)
            if j is None:
                j = len(order)
                if j >= max_states:
                    raise LimitExceededError(
                        "DFA size (states)", max_states, "Limits(max_dfa_states=...)"
                    )
                index[t] = j
                order.append(t)
            row[c] = j
        rows.append(row)
        k += 1
    table = np.array(rows, dtype=np.int32).reshape(len(rows), n_cls)
    accepting = np.array([bool(s & final_bit) for s in order], dtype=np.bool_)
    return minimize(classes, table, accepting, n_calls)


def _live_states(table: np.ndarray, accepting: np.ndarray) -> list[bool]:
    """States from which an accepting state is reachable (reverse BFS over defined edges)."""
    n = table.shape[0]
    src, cls = np.nonzero(table >= 0)
    dst = table[src, cls]
    order = np.argsort(dst, kind="stable")
    preds_flat = src[order].tolist()
    ptr = np.searchsorted(dst[order], np.arange(n + 1)).tolist()
    live = accepting.tolist()
    stack = [s for s in range(n) if live[s]]
    while stack:
        t = stack.pop()
        for s in preds_flat[ptr[t] : ptr[t + 1]]:
            if not live[s]:
                live[s] = True
                stack.append(s)
    return live


def minimize(classes: np.ndarray, table: np.ndarray, accepting: np.ndarray, n_calls: int = 0) -> DFA:
    """Drop dead states, merge equivalent ones, renumber in BFS order from the start state."""
    live = _live_states(table, accepting)
    if not live[0]:
        raise EmptyLanguageError("the pattern matches no string at all (its language is empty)")
    live_arr = np.array(live, dtype=np.bool_)
    table = np.where((table >= 0) & live_arr[np.maximum(table, 0)], table, DEAD)
    from .minimize import equivalence_blocks  # numba loads on the first compile, not on import

    block_of = equivalence_blocks(table, accepting).tolist()
    rows = table.tolist()
    acc = accepting.tolist()
    # Quotient automaton numbered in BFS order from the start state.
    pos = {block_of[0]: 0}
    order = [0]  # representative original state per new state
    new_rows: list[list[int]] = []
    k = 0
    while k < len(order):
        row = []
        for t in rows[order[k]]:
            if t < 0:
                row.append(DEAD)
                continue
            b = block_of[t]
            j = pos.get(b)
            if j is None:
                j = len(order)
                pos[b] = j
                order.append(t)
            row.append(j)
        new_rows.append(row)
        k += 1
    new_table = np.array(new_rows, dtype=np.int32).reshape(len(order), table.shape[1])
    new_acc = np.array([acc[s] for s in order], dtype=np.bool_)
    # Merge byte classes that now behave identically (first occurrence keeps the lower id).
    col_ids: dict[bytes, int] = {}
    keep: list[int] = []
    col_of = np.empty(new_table.shape[1], dtype=np.int64)
    for c, col in enumerate(np.ascontiguousarray(new_table.T)):
        key = col.tobytes()
        j = col_ids.get(key)
        if j is None:
            j = col_ids[key] = len(keep)
            keep.append(c)
        col_of[c] = j
    merged = col_of[classes]
    return DFA(merged[:256], new_table[:, keep], new_acc, merged[256:] if n_calls else None)
