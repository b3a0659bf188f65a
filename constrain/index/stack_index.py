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
from .trie import TokenTrie
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
            + sum(hit[0].nbytes for hit in self._inner.values()),
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

    def _walk(self, r: int, q: int, first: int, last: int, t: TokenTrie, words: Optional[np.ndarray] = None):
        """(tokens read inside rule r from q over trie nodes first..last-1, boundary nodes,
        boundary states)."""
        from .walk import walk_subtree

        dfa = self.rules.dfas[r]
        if words is None:
            words = np.zeros(t.n_words, dtype=np.uint32)
        base = words.copy()
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
            words[:] = base
            cap *= 8

    def _inner_for(self, r: int, q: int):
        """Tokens readable inside rule r from q over the whole vocabulary, cached per (r, q):
        (words, boundary nodes, boundary states, index of the trie the nodes belong to). Where a
        free-text slice loops at q, its tokens are OR-ed in and only the rest trie is walked."""
        hit = self._inner.get((r, q))
        if hit is None:
            dfa = self.rules.dfas[r]
            trie_id, trie, words = 0, self.index.trie, None
            for k, sl in enumerate(self.index.slices):
                if sl.loops_at(dfa.byte_classes, dfa.table, q):
                    trie_id, trie, words = k + 1, sl.rest, sl.mask.copy()
                    break
            hit = (*self._walk(r, q, 1, trie.n_nodes, trie, words), trie_id)
            with self._lock:
                self._inner.setdefault((r, q), hit)
        return hit

    def _compute(self, state: frozenset) -> np.ndarray:
        sem = self.semantics
        tries = [self.index.trie] + [sl.rest for sl in self.index.slices]
        words = np.zeros(self.index.trie.n_words, dtype=np.uint32)
        seen: set[tuple[int, int, tuple]] = set()
        # (trie, node, top) walks still to do; node 0 = the whole vocabulary from the root.
        work: list[tuple[int, int, tuple]] = []
        complete = False
        rows, classes = sem.rows, sem.classes
        for stack in state:
            tops, done = sem.closure(stack)
            complete |= done
            work.extend((0, 0, top) for top in tops)
        while work:
            item = work.pop()
            if item in seen:
                continue
            seen.add(item)
            tid, node, top = item
            r, q, parent, depth = top
            if node == 0:
                inner, b_nodes, b_states, tid = self._inner_for(r, q)
            else:
                inner, b_nodes, b_states = self._walk(r, q, node, int(tries[tid].end[node]), tries[tid])
            words |= inner
            trie = tries[tid]
            for n2, q2 in zip(b_nodes.tolist(), b_states.tolist()):
                if node == 0 and q2 == q and trie.depth[n2] == 1:
                    continue  # first bytes: every expansion of `top` is already in the work list
                here = (r, q2, parent, depth)
                byte = trie.byte[n2]
                for other in sem.closure(here)[0]:
                    # Only tops that can read the boundary's byte are worth a walk.
                    if other != here and rows[other[0]][other[1]][classes[other[0]][byte]] >= 0:
                        work.append((tid, n2, other))
        row = self._finish(words, complete)
        with self._lock:
            self._rows.setdefault(state, row)
            return self._rows[state]
