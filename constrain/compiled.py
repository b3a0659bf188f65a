"""CompiledGrammar: what a compile produces and every Matcher of it shares.

Immutable from the outside and safe to share between threads. It owns the automaton and its
token index; the EOS and special-token rules live here once, not in each front end:
special tokens are never text, EOS ids are allowed exactly where the grammar may end.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from .automata.dfa import DEAD, DFA
from .index.token_index import DFATokenIndex
from .index.vocab_index import VocabIndex
from .vocab import Vocabulary

TERMINATED = -2  # the matcher state after an EOS token was accepted


class CompiledGrammar:
    """A grammar compiled against one vocabulary. Create with `Compiler`; use through `Matcher`."""

    __slots__ = ("kind", "source", "options", "vocab", "dfa", "_index", "_token_bytes", "_special", "_eos")

    def __init__(
        self,
        kind: str,
        source: str,
        options: Mapping[str, Any],
        vocab: Vocabulary,
        dfa: DFA,
        index: VocabIndex,
    ) -> None:
        self.kind = kind
        self.source = source
        self.options = dict(options)
        self.vocab = vocab
        self.dfa = dfa
        self._index = DFATokenIndex(dfa, index)
        self._token_bytes = vocab.token_bytes
        self._special = vocab.special_ids
        self._eos = vocab.eos_token_ids

    def __repr__(self) -> str:
        src = self.source if len(self.source) <= 60 else self.source[:57] + "..."
        return f"CompiledGrammar({self.kind}, {src!r}, states={self.dfa.n_states}, vocab={self.vocab.name})"

    # -- the automaton interface the Matcher walks ------------------------------------------
    def initial_state(self) -> int:
        return 0

    def next_state(self, state: int, token_id: int) -> Optional[int]:
        """State after `token_id`, or None if the grammar rejects it there. Ids must be in range."""
        if state == TERMINATED:
            return None
        if token_id in self._eos:
            return TERMINATED if self.dfa.accepting[state] else None
        if token_id >= len(self._token_bytes) or token_id in self._special:
            return None
        data = self._token_bytes[token_id]
        if not data:
            return None
        nxt = self.dfa.walk(state, data)
        return None if nxt == DEAD else nxt

    def mask_row(self, state: int) -> np.ndarray:
        if state == TERMINATED:
            return self._index.eos_row()
        return self._index.row(state)

    def row_cache(self) -> dict[int, np.ndarray]:
        """The live state -> row dict (read-only use): lets the Matcher skip two calls per mask."""
        return self._index.rows

    def is_accepting(self, state: int) -> bool:
        return state == TERMINATED or bool(self.dfa.accepting[state])

    def forced_bytes(self, state: int) -> bytes:
        if state == TERMINATED:
            return b""
        return self.dfa.forced_bytes(state)

    # -- figures ------------------------------------------------------------------------------
    @property
    def n_states(self) -> int:
        return self.dfa.n_states

    def stats(self) -> dict[str, int]:
        return {
            "dfa_states": self.dfa.n_states,
            "byte_classes": self.dfa.n_classes,
            "rows_cached": self._index.rows_cached,
            "row_memory_bytes": self._index.memory_bytes(),
            "trie_nodes_visited": self._index.nodes_visited,
        }
