"""Everything the mask walk needs from one vocabulary, built once per vocabulary per process."""

from __future__ import annotations

import functools

import numpy as np

from ..automata.warm import warm_compile_kernels
from ..vocab import Vocabulary
from ..vocab.special_bytes import trie_token_bytes
from .first_bytes import FirstBytes
from .slice_choice import SliceProofs
from .slices import TokenSlice, build_slices
from .trie import TokenTrie
from .warm import warm_kernels


class VocabIndex:
    """The full token trie plus the free-text slices (each with the trie of its complement)."""

    __slots__ = ("trie", "slices", "eos_ids", "proofs", "first_bytes")

    def __init__(self, vocab: Vocabulary) -> None:
        # Special tokens under their virtual spellings (vocab/special_bytes.py): masks allow one
        # exactly where a grammar reads its spelling, never as text.
        spelled = trie_token_bytes(vocab.token_bytes, vocab.special_ids)
        self.trie = TokenTrie(spelled)
        self.slices: tuple[TokenSlice, ...] = build_slices(spelled, frozenset(), self.trie)
        self.eos_ids = vocab.eos_token_ids
        first = np.fromiter((b[0] if b else 256 for b in spelled), dtype=np.int32, count=len(spelled))
        self.first_bytes = FirstBytes(first, (self.trie, *(sl.rest for sl in self.slices)))
        self.proofs = SliceProofs()  # slice analyses per DFA, shared by this index's automata
        warm_kernels(self)
        warm_compile_kernels()


@functools.lru_cache(maxsize=8)
def vocab_index(vocab: Vocabulary) -> VocabIndex:
    """Shared per distinct vocabulary (Vocabulary hashes by fingerprint)."""
    return VocabIndex(vocab)
