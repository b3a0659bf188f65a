"""A grammar of rules as a token automaton: token masks through the stack.

For a stack's top frame (rule r, state q), the tokens readable inside rule r are found by the
usual trie walk over r's DFA and cached per (r's DFA, q): they are allowed whatever lies below
on the stack ("context-independent"). Where a vocabulary slice applies at q (slice_choice.py),
its allowed tokens come from a precomputed mask and only the rest of the vocabulary is walked.
The walk also reports *boundaries*: trie nodes whose byte is met in a state that can call
another rule or return. Only there is the rest of the stack consulted: the stack is expanded
(calls pushed, returns popped) and the subtrees under the nodes walked again with each new top;
those walks are cached too, as they recur at every position of a string or a key, and so is
all that lies beyond one top's boundaries once met twice. Rows are cached per position (set of
stacks).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Optional

import numpy as np

from ..automata.rules import RuleSet
from ..automata.stack_semantics import ALL_BYTES, StackSemantics
from ..errors import LimitExceededError
from ..limits import Limits
from .boundaries import Boundaries
from .follow import ExitFilter
from .row_bits import nonzero_words
from .slice_choice import SliceChooser
from .trie import TokenTrie
from .vocab_index import VocabIndex
from .walk import walk_subtrees  # (this module is imported by the first JSON Schema compile)

_BOUNDARY_BUFFER = 4096
_ROOT = np.zeros(1, dtype=np.int32)  # walk_subtrees' `firsts` for a walk from the root
MAX_FORCED_BYTES = 4096


class StackTokenAutomaton:
    """The TokenAutomaton (see constrain/compiled.py) of a grammar of rules."""

    def __init__(self, rules: RuleSet, index: VocabIndex, limits: Limits = Limits()) -> None:
        self.rules = rules
        self.index = index
        self.semantics = StackSemantics(rules, limits.max_stack_depth, limits.max_stacks)
        self._mask_seconds = limits.max_mask_seconds
        self.eos_ids = tuple(sorted(index.eos_ids))
        self._inner: dict[tuple[int, int], tuple[np.ndarray, Boundaries, int]] = {}
        self._rows: dict[Any, np.ndarray] = {}
        self._slices = SliceChooser(index.slices, index.proofs)
        self._same = rules.same  # rules with the same DFA and exits share walks
        self._exit_filter = ExitFilter(rules)  # which exits can matter to the rest of a stack
        self._readable: dict[tuple[int, int], np.ndarray] = {}
        self._subtrees: dict[tuple, tuple[np.ndarray, np.ndarray, Boundaries]] = {}
        self._beyond_cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._beyond_seen: set[tuple] = set()
        self.tries: tuple[TokenTrie, ...] = (index.trie, *(sl.rest for sl in index.slices))
        self._lock = threading.Lock()
        words = np.zeros(index.trie.n_words, dtype=np.uint32)
        for t in self.eos_ids:
            words[t >> 5] |= np.uint32(1 << (t & 31))
        self._eos_row = self._finish(words, False)
        self.nodes_visited = 0
        self._kept_bounds: dict[tuple, tuple] = {}  # boundaries less forbidden first bytes

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
            if b >= 0xF5:  # a special token's virtual spelling: no text (vocab/special_bytes.py)
                break
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
            "rules_built": self.rules.n_built,
            "dfa_states": sum(self.rules.rule(r).dfa.n_states for r in range(self.rules.n_rules) if self.rules.built(r)),
            "rows_cached": len(self._rows),
            "inner_rows_cached": len(self._inner),
            "subtree_walks_cached": len(self._subtrees),
            "row_memory_bytes": sum(r.nbytes for r in self._rows.values())
            + sum(hit[0].nbytes for hit in self._inner.values())
            + sum(hit[0].nbytes + hit[1].nbytes for hit in self._subtrees.values())
            + sum(hit[0].nbytes + hit[1].nbytes for hit in self._beyond_cache.values()),
            "trie_nodes_visited": self.nodes_visited,
        }

    # -- masks ---------------------------------------------------------------------------------
    def _finish(self, words: np.ndarray, accepting: bool) -> np.ndarray:
        if accepting:
            words |= self._eos_row.view(np.uint32)
        row = words.view(np.int32)
        row.setflags(write=False)
        return row

    def _walk(
        self, r: int, q: int, firsts: Optional[tuple[int, ...]], t: TokenTrie, words: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """OR into `words` the tokens read inside rule r from q over the subtrees of `firsts`
        (None: the whole trie); returns the boundaries met (nodes, states)."""
        dfa = self.rules.rule(r).dfa
        kinds, follow = self._exit_filter.kinds(self._same[r])
        starts = _ROOT if firsts is None else np.asarray(firsts, dtype=np.int32)
        cap = _BOUNDARY_BUFFER
        while True:
            b_nodes = np.empty(cap, dtype=np.int32)
            b_states = np.empty(cap, dtype=np.int32)
            n, visited = walk_subtrees(
                t.packed, t.end, t.tok1, t.tok_ptr, t.tok_ids, t.root, t.max_depth, dfa.byte_classes,
                dfa.table, kinds, follow, starts, np.int32(q), words, b_nodes, b_states,
            )
            self.nodes_visited += visited
            if n <= cap:
                return b_nodes[:n].copy(), b_states[:n].copy()
            cap *= 8

    def _subtrees_for(
        self, tid: int, r: int, q: int, firsts: tuple[int, ...]
    ) -> tuple[np.ndarray, np.ndarray, Boundaries]:
        """A walk below boundary nodes, cached per (trie, rule's DFA, q, nodes): the same
        expansions recur at position after position (a string's closing quote, then `,` or
        `}`). Returns (word indices, their bits, boundaries)."""
        key = (tid, self._same[r], q, firsts)
        hit = self._subtrees.get(key)
        if hit is None:
            trie = self.tries[tid]
            words = np.zeros(trie.n_words, dtype=np.uint32)
            b_nodes, b_states = self._walk(r, q, firsts, trie, words)
            idx = nonzero_words(words)
            bounds = Boundaries.of(b_nodes, b_states, trie.byte[b_nodes])
            hit = self._subtrees.setdefault(key, (idx, words[idx], bounds))
        return hit

    def _first_bytes_not(self, top: tuple, forbidden: int, words: np.ndarray, deadline: float) -> None:
        """OR into `words` the tokens `top` and the rest of its stack read whose first byte is
        not in `forbidden` (one bit per byte): after a greedy rule's return (first_bytes.py)."""
        fb = self.index.first_bytes
        if not (self._reads(top[0], top[1]) & fb.allowed(forbidden)).any():
            return
        inner, bounds, tid = self._inner_for(top[0], top[1])
        words |= inner & ~fb.starting_with(forbidden)
        if bounds.groups:
            kept = fb.bounds_without(tid, bounds, forbidden, self._kept_bounds)
            if kept.groups:
                self._beyond(top, tid, kept, words, deadline)

    def _inner_for(self, r: int, q: int) -> tuple[np.ndarray, Boundaries, int]:
        """Tokens readable inside rule r from q over the whole vocabulary, cached per (rule's
        DFA, q): (words, boundaries, index of the trie their nodes belong to). Where a slice
        applies at q, its allowed tokens are OR-ed in and only its rest trie is walked. (The
        walk reports no boundary at the first byte: there the stack's expansions of (r, q)
        read, and every one of them is walked from the root anyway.)"""
        r = self._same[r]
        hit = self._inner.get((r, q))
        if hit is None:
            dfa, _, exits = self.rules.rule(r)
            trie_id, words = self._slices.choose(r, dfa, exits, q)
            trie = self.tries[trie_id]
            if words is None:
                words = np.zeros(trie.n_words, dtype=np.uint32)
            b_nodes, b_states = self._walk(r, q, None, trie, words)
            bounds = Boundaries.of(b_nodes, b_states, trie.byte[b_nodes])
            hit = self._inner.setdefault((r, q), (words, bounds, trie_id))
        return hit

    def _reads(self, r: int, q: int) -> np.ndarray:
        """Bool per byte: can rule r read it in state q."""
        key = (self._same[r], q)
        hit = self._readable.get(key)
        if hit is None:
            dfa = self.rules.rule(r).dfa
            hit = dfa.table[q, dfa.byte_classes] >= 0
            self._readable[key] = hit
        return hit

    def _expand(self, top: tuple, tid: int, bounds: Boundaries, todo: dict) -> None:
        """At each boundary met while reading with `top`, the stack's other tops (calls pushed,
        returns popped) that can read the node's byte walk the node's subtree: queue them."""
        r, _, parent, depth = top
        for q2, nodes, node_bytes in bounds.groups:
            here = (r, q2, parent, depth)
            for other in self.semantics.closure(here)[0]:
                if other != here:
                    picked = bounds.picked(q2, nodes, node_bytes, (self._same[other[0]], other[1]), self._reads)
                    if picked.size:
                        todo.setdefault((tid, other), []).append(picked)

    def _beyond(self, top: tuple, tid: int, bounds: Boundaries, words: np.ndarray, deadline: float) -> None:
        """OR into `words` the tokens that leave `top`'s walk at its boundaries and go on with
        the rest of the stack. Inside a key or a string the top's state changes at every
        character, but the boundaries (the closing quote), the stack below and so everything
        beyond them stay: met a second time, the result is kept per (trie, rule, what lies
        below, boundaries) as word indices and bits (most are met once: they pay nothing)."""
        r, _, parent, depth = top
        key = (tid, r, parent, depth, bounds.key)
        hit = self._beyond_cache.get(key)
        if hit is not None:
            words[hit[0]] |= hit[1]
            return
        again = key in self._beyond_seen
        out = np.zeros_like(words) if again else words
        # (trie, top) -> node arrays whose subtrees top still has to walk; walked: done ones.
        todo: dict[tuple[int, tuple], list[np.ndarray]] = {}
        walked: dict[tuple[int, tuple], set[int]] = {}
        self._expand(top, tid, bounds, todo)
        rounds = 0
        while todo:
            rounds += 1
            if not rounds & 31 and time.perf_counter() > deadline:  # (the clock costs; every 32nd round)
                raise LimitExceededError("seconds for one mask", self._mask_seconds, "Limits(max_mask_seconds=...)")
            (t, other), parts = todo.popitem()
            done = walked.setdefault((t, other), set())
            nodes = set((parts[0] if len(parts) == 1 else np.concatenate(parts)).tolist())
            firsts = sorted(nodes - done if done else nodes)
            if firsts:
                done.update(firsts)
                idx, bits, more = self._subtrees_for(t, other[0], other[1], tuple(firsts))
                out[idx] |= bits
                self._expand(other, t, more, todo)
        if again:
            idx = nonzero_words(out)
            self._beyond_cache.setdefault(key, (idx, out[idx]))
            words |= out
        else:
            self._beyond_seen.add(key)

    def _compute(self, state: frozenset) -> np.ndarray:
        deadline = time.perf_counter() + self._mask_seconds  # (for the whole mask: Limits.max_mask_seconds)
        words = np.zeros(self.index.trie.n_words, dtype=np.uint32)
        tops: set[tuple] = set()
        limited: dict[tuple, int] = {}  # tops a greedy return reaches -> bytes they may not read first
        complete = False
        sem = self.semantics
        for stack in state:
            found, done = sem.closure(stack)
            complete |= done
            limit = sem.restriction(stack)
            if limit is None:
                tops |= found
            else:
                below, forbidden = limit
                tops |= found - below
                for top in below:
                    limited[top] = limited.get(top, ALL_BYTES) & forbidden
        for top in tops:
            inner, bounds, tid = self._inner_for(top[0], top[1])
            words |= inner
            if bounds.groups:
                self._beyond(top, tid, bounds, words, deadline)
        for top, forbidden in limited.items():
            if top not in tops:
                self._first_bytes_not(top, forbidden, words, deadline)
        row = self._finish(words, complete)
        with self._lock:
            self._rows.setdefault(state, row)
            return self._rows[state]
