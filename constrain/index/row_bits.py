"""Bitmask rows as uint32 words (bit t of word t >> 5 is token t): the nonzero words, the ids,
the row of given ids, and a sparse row OR-ed into a whole one."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def or_sparse(words, idx, bits):
    """words[idx] |= bits, as a loop: numpy's fancy `|=` gathers, ORs and scatters through
    temporaries (0.8 against 0.4 us at 5 words, 8.6 against 2.2 at 3,000), and a mask ORs in
    a few such parts per frame of each stack (frame_summaries.py)."""
    for i in range(idx.shape[0]):
        words[idx[i]] |= bits[i]


def warm_or_sparse() -> None:
    """Compile (or load) or_sparse for the index types parts come in: int64 from nonzero(),
    int32 from a warm record (warm_codec.py)."""
    words = np.zeros(1, dtype=np.uint32)
    bits = np.zeros(1, dtype=np.uint32)
    for dtype in (np.int64, np.int32):
        or_sparse(words, np.zeros(1, dtype=dtype), bits)


def nonzero_words(words: np.ndarray) -> np.ndarray:
    """Indices of the nonzero words of a bitmask row: a bool pass first is 4x faster than
    np.flatnonzero on uint32 (1.5 against 6.5 us at 128k tokens)."""
    return (words != 0).nonzero()[0]


_FEW_IDS = 64


def words_of(ids: np.ndarray, n_words: int) -> np.ndarray:
    """uint32 words with the bits of token `ids` set. Many ids: a bool row, packed (bitwise_or.at
    took 1 ms for the 58k tokens of Llama 3 that start with a space, against 60 us packed); a
    few: set one by one (the row's allocation would cost more)."""
    if ids.size <= _FEW_IDS:
        words = np.zeros(n_words, dtype=np.uint32)
        np.bitwise_or.at(words, ids >> 5, np.uint32(1) << (ids & 31).astype(np.uint32))
        return words
    flags = np.zeros(n_words * 32, dtype=np.bool_)
    flags[ids] = True
    return np.packbits(flags, bitorder="little").view(np.uint32)


def token_ids(words: np.ndarray) -> list[int]:
    """The token ids whose bits are set in `words`, ascending (unpacking only the nonzero
    words: a whole 128k-bit row costs more than the rest of most rows)."""
    nz = nonzero_words(words)
    if not nz.size:
        return []
    w, b = np.nonzero(np.unpackbits(words[nz].view(np.uint8), bitorder="little").reshape(-1, 32))
    return (nz[w] * 32 + b).tolist()
