"""Vocabulary slices: whole groups of tokens allowed at once in free-text states.

A slice is the set of tokens made only of bytes from one byte set (e.g. printable ASCII without
`"` and `\\`: 93k of Llama 3's 128k tokens). In a DFA state where every byte of the set loops
back to the state itself (inside `[^"\\]*`, `.*`, a JSON string), every token of the slice is
allowed, so its precomputed mask is OR-ed in and only the *rest* trie, the tokens outside the
slice, is walked: a quarter of the nodes. This is what keeps wide states cheap on first visit.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .trie import TokenTrie

# Byte sets worth a slice, widest first: free text in strings, then identifier-like text.
DEFAULT_SLICE_BYTES: tuple[frozenset[int], ...] = (
    frozenset(range(0x20, 0x7F)) - {0x22, 0x5C},
    frozenset(range(0x30, 0x3A)) | frozenset(range(0x41, 0x5B)) | frozenset(range(0x61, 0x7B)) | {0x20, 0x5F},
)

MIN_SLICE_TOKENS = 1024  # a smaller slice saves less than the check costs


class TokenSlice:
    __slots__ = ("byte_values", "mask", "rest", "n_tokens")

    def __init__(self, byte_values: np.ndarray, mask: np.ndarray, rest: TokenTrie, n_tokens: int) -> None:
        self.byte_values = byte_values
        self.mask = mask
        self.rest = rest
        self.n_tokens = n_tokens

    def loops_at(self, byte_classes: np.ndarray, table: np.ndarray, state: int) -> bool:
        """True if every byte of the slice leads from `state` back to `state`."""
        return bool(np.all(table[state, byte_classes[self.byte_values]] == state))


def build_slices(
    token_bytes: Sequence[bytes],
    excluded: frozenset[int],
    byte_sets: Sequence[frozenset[int]] = DEFAULT_SLICE_BYTES,
) -> tuple[TokenSlice, ...]:
    slices = []
    n_words = (len(token_bytes) + 31) // 32
    for byte_set in byte_sets:
        table = bytes(1 if b in byte_set else 0 for b in range(256))
        inside = []
        rest_bytes = list(token_bytes)
        for tid, data in enumerate(token_bytes):
            # bytes.translate maps every byte of the set to 1: all-ones means all inside.
            if data and tid not in excluded and data.translate(table).count(1) == len(data):
                inside.append(tid)
                rest_bytes[tid] = b""
        if len(inside) < MIN_SLICE_TOKENS:
            continue
        mask = np.zeros(n_words, dtype=np.uint32)
        ids = np.asarray(inside, dtype=np.int64)
        np.bitwise_or.at(mask, ids >> 5, (np.uint32(1) << (ids & 31).astype(np.uint32)))
        mask.setflags(write=False)
        values = np.asarray(sorted(byte_set), dtype=np.int64)
        slices.append(TokenSlice(values, mask, TokenTrie(rest_bytes, excluded), len(inside)))
    return tuple(slices)
