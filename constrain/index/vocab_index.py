"""Everything the mask walk needs from one vocabulary, built once per vocabulary per process."""

from __future__ import annotations

import functools

from ..automata.warm import warm_compile_kernels
from ..vocab import Vocabulary
from .slice_choice import SliceProofs
from .slices import TokenSlice, build_slices
from .trie import TokenTrie
from .warm import warm_kernels


class VocabIndex:
    """The full token trie plus the free-text slices (each with the trie of its complement)."""

    __slots__ = ("trie", "slices", "eos_ids", "proofs")

    def __init__(self, vocab: Vocabulary) -> None:
        self.trie = TokenTrie(vocab.token_bytes, vocab.special_ids)
        self.slices: tuple[TokenSlice, ...] = build_slices(vocab.token_bytes, vocab.special_ids, self.trie)
        self.eos_ids = vocab.eos_token_ids
        self.proofs = SliceProofs()  # slice analyses per DFA, shared by this index's automata
        warm_kernels(self)
        warm_compile_kernels()


@functools.lru_cache(maxsize=8)
def vocab_index(vocab: Vocabulary) -> VocabIndex:
    """Shared per distinct vocabulary (Vocabulary hashes by fingerprint)."""
    return VocabIndex(vocab)
