"""A grammar of rules as a token automaton: token masks through the stack.

For a stack's top frame (rule r, state q), the tokens readable inside rule r are found by the
usual trie walk over r's DFA and cached per (r, q): they are allowed whatever lies below on
the stack ("context-independent"). The walk also reports *boundaries*: trie nodes whose byte is
met in a state that can call another rule or return. Only there is the rest of the stack
consulted: the stack is expanded (calls pushed, returns popped) and the subtree under the node
walked again with each new top. Rows are cached per position (set of stacks).
"""

from __future__ import annotations

import threading
from typing import Any, Optional

import numpy as np

from ..automata.rules import RuleSet, StackSemantics
from .vocab_index import VocabIndex

_BOUNDARY_BUFFER = 4096
MAX_FORCED_BYTES = 4096


class StackTokenAutomaton:
    """The TokenAutomaton (see constrain/compiled.py) of a grammar of rules."""

    def __init__(self, rules: RuleSet, index: VocabIndex, max_stack_depth: int = 10_000) -> None:
        self.rules = rules
        self.index = index
        self.semantics = StackSemantics(rules, max_stack_depth)
        self.eos_ids = tuple(sorted(index.eos_ids))
        self._inner: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._rows: dict[Any, np.ndarray] = {}
        self._lock = threading.Lock()
        words = np.zeros(index.trie.n_words, dtype=np.uint32)
        self._eos_row = self._finish(words, True)
        self.nodes_visited = 0

    # -- TokenAutomaton ------------------------------------------------------------------------
    def initial_state(self) -> frozenset:
        return self.semantics.initial()

    def advance(self, state: frozenset, data: bytes) -> Optional[frozenset]:
        return self.semantics.advance(state, data)

    def is_accepting(self, state: frozenset) -> bool:
        return self.semantics.is_complete(state)

    def forced_bytes(self, state: frozenset) -> bytes:
        out = bytearray()
        sem = self.semantics
        while len(out) < MAX_FORCED_BYTES and not sem.is_complete(state):
            nxt = sem.next_bytes(state)
            if len(nxt) != 1:
                break
            (b,) = nxt
            out.append(b)
            state = sem.step(state, b)
        return bytes(out)

    def eos_row(self) -> np.ndarray:
        return self._eos_row

    def row_cache(self) -> dict[Any, np.ndarray]:
        return self._rows

    def mask_row(self, state: frozenset) -> np.ndarray:
        row = self._rows.get(state)
        if row is None:
            row = self._compute(state)
        return row

    def stats(self) -> dict[str, int]:
        return {
            "rules": self.rules.n_rules,
            "dfa_states": sum(d.n_states for d in self.rules.dfas),
            "rows_cached": len(self._rows),
            "inner_rows_cached": len(self._inner),
            "row_memory_bytes": sum(r.nbytes for r in self._rows.values())
            + sum(w.nbytes for w, _, _ in self._inner.values()),
            "trie_nodes_visited": self.nodes_visited,
        }

    # -- masks ---------------------------------------------------------------------------------
    def _finish(self, words: np.ndarray, accepting: bool) -> np.ndarray:
        if accepting:
            for t in self.eos_ids:
                words[t >> 5] |= np.uint32(1 << (t & 31))
        row = words.view(np.int32)
        row.setflags(write=False)
        return row

    def _walk(self, r: int, q: int, first: int, last: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from .walk import walk_subtree

        t = self.index.trie
        dfa = self.rules.dfas[r]
        words = np.zeros(t.n_words, dtype=np.uint32)
        cap = _BOUNDARY_BUFFER
        while True:
            b_nodes = np.empty(cap, dtype=np.int32)
            b_states = np.empty(cap, dtype=np.int32)
            n = walk_subtree(
                t.packed, t.end, t.tok1, t.tok_ptr, t.tok_ids, t.max_depth, dfa.byte_classes,
                dfa.table, self.rules.exits[r], np.int32(first), np.int32(last), np.int32(q),
                words, b_nodes, b_states,
            )
            if n <= cap:
                self.nodes_visited += last - first
                return words, b_nodes[:n].copy(), b_states[:n].copy()
            words[:] = 0
            cap *= 8

    def _inner_for(self, r: int, q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Tokens readable inside rule r from q, over the whole trie (cached per (r, q))."""
        hit = self._inner.get((r, q))
        if hit is None:
            hit = self._walk(r, q, 1, self.index.trie.n_nodes)
            with self._lock:
                self._inner.setdefault((r, q), hit)
        return hit

    def _compute(self, state: frozenset) -> np.ndarray:
        sem = self.semantics
        trie = self.index.trie
        words = np.zeros(trie.n_words, dtype=np.uint32)
        seen: set[tuple[int, tuple]] = set()
        work: list[tuple[int, tuple]] = []  # (node, top) walks still to do; node 0 = whole trie
        complete = False
        rows, classes = sem.rows, sem.classes
        depths, node_bytes = self.index.trie.depth, self.index.trie.byte
        for stack in state:
            tops, done = sem.closure(stack)
            complete |= done
            work.extend((0, top) for top in tops)
        while work:
            node, top = work.pop()
            if (node, top) in seen:
                continue
            seen.add((node, top))
            r, q, parent, depth = top
            if node == 0:
                inner, b_nodes, b_states = self._inner_for(r, q)
            else:
                inner, b_nodes, b_states = self._walk(r, q, node, int(trie.end[node]))
            words |= inner
            for n2, q2 in zip(b_nodes.tolist(), b_states.tolist()):
                if node == 0 and q2 == q and depths[n2] == 1:
                    continue  # first bytes: every expansion of `top` is already in the work list
                here = (r, q2, parent, depth)
                byte = node_bytes[n2]
                for other in sem.closure(here)[0]:
                    # Only tops that can read the boundary's byte are worth a walk.
                    if other != here and rows[other[0]][other[1]][classes[other[0]][byte]] >= 0:
                        work.append((n2, other))
        row = self._finish(words, complete)
        with self._lock:
            self._rows.setdefault(state, row)
            return self._rows[state]
