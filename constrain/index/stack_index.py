"""A grammar of rules as a token automaton: token masks through the stack.

For a stack's top frame (rule r, state q), the tokens readable inside rule r are found by the
usual trie walk over r's DFA and cached per (r's DFA, q): they are allowed whatever lies below
on the stack ("context-independent"). Where a vocabulary slice applies at q (slice_choice.py),
its allowed tokens come from a precomputed mask and only the rest of the vocabulary is walked.
The walk also reports *boundaries*: trie nodes whose byte is met in a state that can call
another rule or return. Only there is the rest of the stack consulted, through frame summaries
(frame_summaries.py): what a frame reads from given nodes and where it pops, cached per (rule,
state, nodes) whatever lies below. Rows are cached per position (set of stacks).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Optional

import numpy as np

from ..automata.rules import RuleSet
from ..automata.stack_semantics import Parents, StackSemantics
from ..limits import Limits
from .boundaries import Boundaries
from .chain_tables import ChainTables
from .chain_walk import TOP, chain
from .follow import ExitFilter
from .frame_summaries import FrameSummaries
from .name_runs import name_closed_states
from .pushdown_summary import warm_up
from .row_bits import nonzero_words
from .sparse_or import or_sparse
from .slice_choice import SliceChooser
from .trie import TokenTrie
from .vocab_index import VocabIndex
from .walk import walk_subtrees  # (this module is imported by the first JSON Schema compile)

_BOUNDARY_BUFFER = 4096
_ROOT = np.zeros(1, dtype=np.int32)  # walk_subtrees' `firsts` for a walk from the root
MAX_FORCED_BYTES = 4096
_MISSES = 256  # misses one round of chaining records at first
MAX_FORCED_MEMO = 65_536  # positions whose forced bytes are kept (cleared when full)
MAX_ROWS = 16_384  # positions whose rows are kept (~256 MiB at Llama 3; cleared when full): a
# recursive grammar's positions have no bound (each nesting path is one), a server's requests meet ever more
MAX_BELOW = 4_096  # (frame, item) pairs whose chaining below is kept (<= 64 MiB at Llama 3)...
MAX_BELOW_SEEN = 65_536  # ... and those met once, each cleared when full: frames hold their
# parents, so a recursive grammar's nesting makes ever more


class StackTokenAutomaton:
    """The TokenAutomaton (see constrain/compiled.py) of a grammar of rules."""

    # Known summaries chained by the numba loop (chain_walk.py) only where its arrays were filled in
    # one go from a warm record (warm_codec.py sets it): there a known position's mask took 26.6 ->
    # 16.7 us (SQL). In a process that learns its summaries, filling the arrays one by one cost more
    # than the loop saved (cold 230.9 -> 245.3 us, steady 17.8 -> 20.7): Python chains there.
    chain_in_numba = False

    def __init__(self, rules: RuleSet, index: VocabIndex, limits: Limits = Limits()) -> None:
        self.rules = rules
        self.index = index
        self.semantics = StackSemantics(rules, limits.max_stack_depth, limits.max_stacks, limits.max_accept_seconds)
        self.mask_seconds = limits.max_mask_seconds
        self.eos_ids = tuple(sorted(index.eos_ids))
        self._inner: dict[tuple[int, int], tuple[np.ndarray, Boundaries, int]] = {}
        self._rows: dict[Any, np.ndarray] = {}
        self._forced: dict[Any, bytes] = {}
        self._slices = SliceChooser(index.slices, index.proofs)
        self._same = rules.same  # rules with the same DFA and exits share walks
        self.exit_filter = ExitFilter(rules)  # which exits can matter to the rest of a stack
        self._readable: dict[tuple[int, int], np.ndarray] = {}
        self.tries: tuple[TokenTrie, ...] = (index.trie, *(sl.rest for sl in index.slices))
        self._lock = threading.Lock()
        words = np.zeros(index.trie.n_words, dtype=np.uint32)
        for t in self.eos_ids:
            words[t >> 5] |= np.uint32(1 << (t & 31))
        self._eos_row = self._finish(words, False)
        self.nodes_visited = 0
        self.kept_bounds: dict[tuple, tuple] = {}  # boundaries less forbidden first bytes
        self._below_cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._below_seen: set[tuple] = set()
        self.summaries = FrameSummaries(self, limits.max_stack_depth, limits.max_stacks)
        self.chain_tables = ChainTables(index.trie.n_words)
        self._missed: set[tuple[int, int, int]] = set()  # (rule class, state, item) the loop has missed once

    # -- TokenAutomaton ------------------------------------------------------------------------
    def initial_state(self) -> frozenset:
        return self.semantics.initial()

    def advance(self, state: frozenset, data: bytes) -> Optional[frozenset]:
        return self.semantics.advance(state, data)

    def is_accepting(self, state: frozenset) -> bool:
        return self.semantics.is_complete(state)

    def forced_bytes(self, state: frozenset) -> bytes:
        """Memoized per position (jump-forward asks at every decoding step; each forced byte
        costs a pass over the stacks' next bytes)."""
        known = self._forced.get(state)
        if known is None:
            known = self._forced_bytes(state)
            if len(self._forced) >= MAX_FORCED_MEMO:
                self._forced.clear()
            self._forced[state] = known
        return known

    def _forced_bytes(self, state: frozenset) -> bytes:
        out = bytearray()
        sem = self.semantics
        while len(out) < MAX_FORCED_BYTES and not sem.is_complete(state):
            nxt = sem.next_bytes(state)
            if len(nxt) != 1:
                break
            (b,) = nxt
            if b >= 0xF5:  # a special token's virtual spelling: no text (vocab/special_bytes.py)
                break
            state = sem.step(state, b)
            if not state:  # (several stacks' next bytes are a superset where an end refuses some)
                break
            out.append(b)
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
            "frame_summaries_cached": len(self.summaries),
            "row_memory_bytes": sum(r.nbytes for r in self._rows.values())
            + sum(hit[0].nbytes for hit in self._inner.values())
            + self.summaries.memory_bytes()
            + sum(hit[0].nbytes + hit[1].nbytes for hit in self._below_cache.values()),
            "trie_nodes_visited": self.nodes_visited + self.summaries.pushdown.nodes_visited,
        }

    # -- masks ---------------------------------------------------------------------------------
    def _finish(self, words: np.ndarray, accepting: bool) -> np.ndarray:
        if accepting:
            words |= self._eos_row.view(np.uint32)
        row = words.view(np.int32)
        row.setflags(write=False)
        return row

    def walk(
        self, r: int, q: int, firsts: Optional[np.ndarray], t: TokenTrie, words: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """OR into `words` the tokens read inside rule r from q over the subtrees of `firsts`
        (int32 node ids; None: the whole trie); returns the boundaries met (nodes, states)."""
        dfa = self.rules.rule(r).dfa
        kinds, follow = self.exit_filter.kinds(self._same[r])
        checks = self.exit_filter.checks(self._same[r], dfa.n_states)
        free = name_closed_states(dfa)  # (its states that read any run of name bytes: name_runs.py)
        starts = _ROOT if firsts is None else firsts
        cap = _BOUNDARY_BUFFER
        while True:
            b_nodes = np.empty(cap, dtype=np.int32)
            b_states = np.empty(cap, dtype=np.int32)
            n, visited = walk_subtrees(
                t.packed, t.end, t.tok1, t.tok_ptr, t.tok_ids, t.root, t.max_depth, dfa.byte_classes,
                dfa.table, kinds, follow, checks, free, t.names, starts, np.int32(q), words, b_nodes, b_states,
            )
            self.nodes_visited += visited
            if n <= cap:
                return b_nodes[:n].copy(), b_states[:n].copy()
            cap *= 8

    def inner_walk(self, r: int, q: int) -> tuple[np.ndarray, Boundaries, int]:
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
            b_nodes, b_states = self.walk(r, q, None, trie, words)
            bounds = Boundaries.of(b_nodes, b_states, trie.byte[b_nodes])
            hit = self._inner.setdefault((r, q), (words, bounds, trie_id))
        return hit

    def reads(self, r: int, q: int) -> np.ndarray:
        """Bool per byte: can rule r read it in state q."""
        key = (self._same[r], q)
        hit = self._readable.get(key)
        if hit is None:
            dfa = self.rules.rule(r).dfa
            hit = dfa.table[q, dfa.byte_classes] >= 0
            self._readable[key] = hit
        return hit

    def _compute(self, state: frozenset) -> np.ndarray:
        """Each stack's summaries chained downward: its top's from the root, then each frame's
        from the items where the one above it pops (frame_summaries.py)."""
        warm_up()  # (the pushdown walk's first compile is no part of any mask's time)
        deadline = time.perf_counter() + self.mask_seconds  # (for the whole mask: Limits.max_mask_seconds)
        words = np.zeros(self.index.trie.n_words, dtype=np.uint32)
        complete = self.semantics.is_complete(state)
        if self.chain_in_numba:
            self._chain(state, words, deadline)
        else:
            self._chain_in_python(state, words, deadline)
        row = self._finish(words, complete)
        with self._lock:
            if len(self._rows) >= MAX_ROWS:
                self._rows.clear()  # (in place: matchers hold this dict; the rows they hold stay valid)
            return self._rows.setdefault(state, row)

    def _chain(self, state: frozenset, words: np.ndarray, deadline: float) -> None:
        """The summaries chained by the numba loop (chain_walk.py). Where it misses (a summary
        not in its arrays), the branch is chained in Python the first time; the second time the
        summary is added and the loop goes on from there (a round per level of such summaries).
        Adding costs ~16 us a summary, and most of those a new position meets are met once."""
        tables, same, summaries = self.chain_tables, self._same, self.summaries
        while True:
            generation = tables.generation
            ids = [tables.frame_id(top, same) for top in state]
            if None in ids:  # (a merged frame below: Python chains its parents)
                return self._chain_in_python(state, words, deadline)
            at = np.array([(f, TOP) for f in ids], dtype=np.int64)
            generation_now, frames, arrays = tables.snapshot()
            if generation_now == generation:  # (else a top's id was given before the frames were reset)
                break
        misses = np.empty((_MISSES, 2), dtype=np.int64)
        while True:
            n_miss = chain(at, *arrays, words, misses)
            if n_miss > misses.shape[0]:  # (not all recorded: once more, with room for them; OR-ing twice is harmless)
                misses = np.empty((2 * n_miss, 2), dtype=np.int64)
                n_miss = chain(at, *arrays, words, misses)
            if not n_miss:
                return
            again = []
            for f, item in misses[:n_miss].tolist():
                frame = frames[f]
                r, q = same[frame[0]], frame[1]
                found = summaries.top(r, q, deadline) if item == TOP else summaries.get(r, q, item, deadline)
                if (r, q, item) in self._missed:
                    tables.add(r, q, item, found)
                    again.append((f, item))
                    continue
                self._missed.add((r, q, item))
                found.or_into(words)
                if frame[2] is not None:
                    self._or_down([(frame[2], p) for p in found.pops], words, deadline)
            if not again:
                return
            at = np.array(again, dtype=np.int64)
            _, frames, arrays = tables.snapshot()  # (same generation: this mask adds no frame)

    def _chain_in_python(self, state: frozenset, words: np.ndarray, deadline: float) -> None:
        same, summaries = self._same, self.summaries
        top_pops: dict[tuple[int, int], tuple[int, ...]] = {}  # (an ambiguous text's stacks share tops)
        below: set[tuple[int, int]] = set()  # (id of a frame, item): frames live as long as `state`
        for r, q, parent, _ in state:
            pops = top_pops.get((same[r], q))
            if pops is None:
                pops = top_pops[(same[r], q)] = summaries.read_top(same[r], q, words, deadline)
            if parent is not None:
                for p in pops:
                    if (id(parent), p) not in below:
                        below.add((id(parent), p))
                        self._below(parent, p, words, deadline)

    def _or_down(self, todo: list[tuple[tuple, int]], words: np.ndarray, deadline: float) -> None:
        """OR into `words` what each (frame, item) of `todo` and the frames below read (Python)."""
        same, summaries = self._same, self.summaries
        seen: set[tuple[int, int]] = set()
        while todo:
            frame, item = todo.pop()
            if (id(frame), item) in seen:
                continue
            seen.add((id(frame), item))
            if type(frame) is Parents:  # (a merged frame's parents: each reads on from the item)
                todo.extend((f, item) for f in frame)
                continue
            r, q, parent, _ = frame
            found = summaries.get(same[r], q, item, deadline)
            found.or_into(words)
            if parent is not None:
                todo.extend((parent, p) for p in found.pops)

    def _below(self, frame: tuple, item: int, words: np.ndarray, deadline: float) -> None:
        """OR into `words` what `frame` and the frames below it read from `item` on. Inside a
        key or a string the top changes at every character while where it pops (the closing
        quote) and the stack below stay: met a second time, the result is kept per (frame, item)
        as word indices and bits (most are met once: they pay nothing)."""
        key = (frame, item)
        hit = self._below_cache.get(key)
        if hit is not None:
            or_sparse(words, hit[0], hit[1])
            return
        again = key in self._below_seen
        out = np.zeros_like(words) if again else words
        self._or_down([key], out, deadline)
        if again:
            idx = nonzero_words(out)
            if len(self._below_cache) >= MAX_BELOW:
                self._below_cache.clear()
            self._below_cache.setdefault(key, (idx, out[idx]))
            words |= out
        else:
            if len(self._below_seen) >= MAX_BELOW_SEEN:
                self._below_seen.clear()
            self._below_seen.add(key)
