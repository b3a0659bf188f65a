"""The Python side of a pushdown walk (pushdown_walk.py): one frame's reading from a node item.

Runs the walk over the grammar's flattened tables (pushdown_tables.py) and answers its statuses:
a full buffer is retried with larger ones (kept for later walks), a rule not flattened yet is
flattened, a spent work budget is renewed (4x) while the mask's deadline allows, and a limit
raises LimitExceededError naming its knob. `warm_up` compiles the walk once per process outside
any mask's clock (a first compile takes seconds on a small machine).
"""

from __future__ import annotations

import threading
import time
from typing import Optional

import numpy as np

from ..automata.rules import RuleSet
from ..errors import GrammarError, LimitExceededError
from ..sorted_sets import sorted_unique
from .node_sets import is_ascending, merged_ascending
from .pushdown_tables import PushdownTables
from .pushdown_walk import CONDITIONAL, FULL_CELLS, FULL_ENTRIES, NEED_RULE, OK, OUT_OF_WORK, TOO_DEEP, TOO_MANY, summary_walk
from .chain_walk import warm_chain
from .sparse_or import warm_or_sparse
from .trie import TokenTrie
from .walk import readable_subtrees_within

WORK = 1 << 22  # stack steps a walk makes before the clock is read (then 4x more)
CAPS = (4096, 65536, 4096, 16384)  # first buffers: cells, per-path stacks, pops, closures


class PushdownSummaries:
    """Walks for one grammar of rules; thread-safe as its tables are."""

    def __init__(self, rules: RuleSet, max_nesting: int, max_stacks: int, mask_seconds: float) -> None:
        self.tables = PushdownTables(rules)
        self.max_nesting = max_nesting
        self.max_stacks = max_stacks
        self.mask_seconds = mask_seconds
        self.caps = CAPS
        self.nodes_visited = 0

    def read(self, rep: int, q: int, trie: TokenTrie, nodes: np.ndarray, deadline: float
             ) -> Optional[tuple[np.ndarray, Optional[np.ndarray], Optional[tuple[np.ndarray, np.ndarray]]]]:
        """(the words of the tokens frame (rep, q) reads from `nodes` without popping, the nodes
        where it pops, ascending, or None; where it pops on condition of the byte after the
        next one, (nodes, CHECK rule classes), or None); None where such a return met a second
        one (the caller summarizes the frame otherwise)."""
        tables = self.tables
        g0 = np.int32(tables.state(rep, q))
        caps = self.caps
        budget = WORK
        while True:
            if time.perf_counter() > deadline:
                raise LimitExceededError("seconds for one mask", self.mask_seconds, "Limits(max_mask_seconds=...)")
            words = np.zeros(trie.n_words, dtype=np.uint32)
            pops = np.empty(caps[2], dtype=np.int32)
            cpops = np.empty((caps[2] >> 4, 2), dtype=np.int32)  # (node, CHECK class): few
            status, n_pops, n_cpops, visited, ordered = summary_walk(
                trie.packed, trie.end, trie.tok1, trie.tok_ptr, trie.tok_ids, trie.max_depth, trie.names,
                *tables.arrays(), g0, nodes, words, pops, cpops, caps[0], caps[1], caps[3], self.max_nesting,
                self.max_stacks, budget,
            )
            self.nodes_visited += visited
            if status == OK:
                break
            if status == CONDITIONAL:
                return None
            if status >= NEED_RULE:
                tables.ensure(status - NEED_RULE)
            elif status == OUT_OF_WORK:  # (the clock is read above)
                budget *= 4
            elif status == TOO_DEEP:
                raise LimitExceededError("grammar stack depth", self.max_nesting, "Limits(max_stack_depth=...)")
            elif status == TOO_MANY:
                raise LimitExceededError(
                    "readings of the text at one position (an ambiguous grammar's stacks)", self.max_stacks,
                    "Limits(max_stacks=...)",
                )
            elif FULL_CELLS <= status <= FULL_ENTRIES:  # a buffer was full: larger ones from now on
                k = status - FULL_CELLS
                caps = self.caps = tuple(c * 4 if j == k else c for j, c in enumerate(caps))
            else:
                raise GrammarError(f"pushdown walk: unknown status {status}")  # (a bug if met)
        checked = (cpops[:n_cpops, 0].copy(), cpops[:n_cpops, 1].copy()) if n_cpops else None
        if not n_pops:
            return words, None, checked
        return words, pops[:n_pops].copy() if ordered else sorted_unique(pops[:n_pops], trie.n_nodes), checked


_warm = [False]
_warm_lock = threading.Lock()


def warm_up() -> None:
    """Compile the walk, frame_summaries' size check, the node-set loops, the sparse OR and the
    chaining loop (or load them from numba's cache) once per process, on a one-token trie with
    the argument types of real calls: outside any mask's clock (a first compile takes seconds
    on a small machine)."""
    if _warm[0]:
        return
    with _warm_lock:
        if _warm[0]:
            return
        trie = TokenTrie([b"a"])
        one = np.zeros(1, dtype=np.int32)
        summary_walk(
            trie.packed, trie.end, trie.tok1, trie.tok_ptr, trie.tok_ids, trie.max_depth, trie.names,
            one, np.zeros(1, dtype=np.int64), np.full(1, -1, dtype=np.int32), np.zeros((1, 256), dtype=np.int32),
            np.ones(1, dtype=np.uint8), np.zeros(1, dtype=np.uint8), np.zeros((1, 4), dtype=np.uint64),
            np.zeros(1, dtype=np.uint8), np.zeros(2, dtype=np.int32), one.copy(), one.copy(), one.copy(), np.zeros(1, dtype=np.uint8),
            np.zeros(2, dtype=np.int32), one.copy(),
            np.int32(0), np.ones(1, dtype=np.int32), np.zeros(trie.n_words, dtype=np.uint32),
            np.zeros(4, dtype=np.int32), np.zeros((4, 2), dtype=np.int32), 16, 16, 16, 10, 10, 1000,
        )
        readable_subtrees_within(one, trie.byte, trie.end, np.ones(256, dtype=np.bool_), 16)
        merged_ascending(one, one)
        is_ascending(one)
        warm_or_sparse()
        warm_chain()
        _warm[0] = True
