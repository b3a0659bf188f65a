"""A DFA as a token automaton: token steps, and allowed-token rows computed on first visit.

A row is the packed bitmask (int32 words, token t = bit t%32 of word t//32) of the tokens whose
bytes the DFA can read from that state without dying; EOS bits are added at accepting states.
Rows are cached per state: nothing is stored for states never visited, one row (16 KB at 128k
tokens) per visited state. Shared by every matcher of the grammar; filling a row twice in a race
is harmless (same bits, last write wins).
"""

from __future__ import annotations

import threading

import numpy as np

from ..automata.dfa import DEAD, DFA
from .name_runs import name_closed_states
from .slice_choice import SliceChooser
from .vocab_index import VocabIndex

_NO_FOLLOW = np.zeros((1, 256), dtype=np.bool_)
_WHOLE_TRIE = np.zeros(1, dtype=np.int32)  # walk_subtrees' `firsts` for a walk from the root


class DFATokenAutomaton:
    """The TokenAutomaton (see constrain/compiled.py) of a regular grammar: states are DFA states."""

    __slots__ = (
        "dfa", "index", "eos_ids", "_rows", "_lock", "_eos_row", "_slices", "_no_exits", "_no_exit_kinds",
        "nodes_visited",
    )

    def __init__(self, dfa: DFA, index: VocabIndex) -> None:
        self.dfa = dfa
        self.index = index
        self.eos_ids = tuple(sorted(index.eos_ids))
        self._rows: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()
        self._eos_row = self._with_eos(np.zeros(index.trie.n_words, dtype=np.uint32))
        self._slices = SliceChooser(index.slices, index.proofs)
        self._no_exits = np.zeros(dfa.n_states, dtype=np.bool_)  # a token never leaves a regex
        self._no_exit_kinds = np.zeros(dfa.n_states, dtype=np.uint8)  # (the walk's form of it)
        self.nodes_visited = 0

    def _with_eos(self, words: np.ndarray) -> np.ndarray:
        for t in self.eos_ids:
            words[t >> 5] |= np.uint32(1 << (t & 31))
        row = words.view(np.int32)
        row.setflags(write=False)
        return row

    def initial_state(self) -> int:
        return 0

    def advance(self, state: int, data: bytes) -> int | None:
        """State after reading a token's bytes, or None where the grammar rejects them."""
        nxt = self.dfa.walk(state, data)
        return None if nxt == DEAD else nxt

    def is_accepting(self, state: int) -> bool:
        return bool(self.dfa.accepting[state])

    def forced_bytes(self, state: int) -> bytes:
        return self.dfa.forced_bytes(state)

    def mask_row(self, state: int) -> np.ndarray:
        """The read-only int32 row of allowed tokens at DFA `state`."""
        row = self._rows.get(state)
        if row is None:
            row = self._compute(state)
        return row

    def eos_row(self) -> np.ndarray:
        """Only the EOS ids: the row after the grammar has terminated."""
        return self._eos_row

    def _compute(self, state: int) -> np.ndarray:
        from .walk import walk_subtrees  # numba loads on the first mask, not on `import constrain`

        dfa = self.dfa
        k, words = self._slices.choose(0, dfa, self._no_exits, state)
        t = self.index.slices[k - 1].rest if k else self.index.trie
        if words is None:
            words = np.zeros(t.n_words, dtype=np.uint32)
        no_boundaries = np.empty(0, dtype=np.int32)  # a regex has no exits
        _, visited = walk_subtrees(
            t.packed, t.end, t.tok1, t.tok_ptr, t.tok_ids, t.root, t.max_depth, dfa.byte_classes,
            dfa.table, self._no_exit_kinds, _NO_FOLLOW, self._no_exit_kinds, name_closed_states(dfa), t.names,
            _WHOLE_TRIE, np.int32(state), words, no_boundaries, no_boundaries,
        )
        if self.dfa.accepting[state]:
            row = self._with_eos(words)
        else:
            row = words.view(np.int32)
            row.setflags(write=False)
        with self._lock:
            self.nodes_visited += int(visited)
            self._rows.setdefault(state, row)
            return self._rows[state]

    def row_cache(self) -> dict[int, np.ndarray]:
        return self._rows

    def stats(self) -> dict[str, int]:
        return {
            "dfa_states": self.dfa.n_states,
            "byte_classes": self.dfa.n_classes,
            "rows_cached": len(self._rows),
            "row_memory_bytes": sum(r.nbytes for r in self._rows.values()) + self._eos_row.nbytes,
            "trie_nodes_visited": self.nodes_visited,
        }
