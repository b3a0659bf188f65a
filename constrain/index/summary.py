"""A frame summary's value (frame_summaries.py): the tokens the frame reads, as parts, and the
items where it pops; how parts are kept, OR-ed into a row and merged.

A part is whole words (dense) or a (word indices, bits) pair: cached arrays, never written. A
summary met once or twice is cheaper OR-ed part by part than merged, so kept summaries merge
their parts only beyond MAX_PARTS; a stack's top keeps its parts as they are.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .row_bits import nonzero_words
from .sparse_or import or_sparse

MAX_PARTS = 4  # a kept summary's parts are merged into one beyond this many
DENSE = 4  # a row is kept whole when more than 1/DENSE of its words are set


class Summary(NamedTuple):
    """Tokens as `parts` and the items where the frame pops."""

    parts: tuple
    pops: tuple[int, ...]

    def or_into(self, words: np.ndarray) -> None:
        or_parts(self.parts, words)


NOTHING = Summary((), ())


def or_parts(parts, words: np.ndarray) -> None:
    for part in parts:
        if isinstance(part, tuple):
            or_sparse(words, part[0], part[1])
        else:
            words |= part


def part_bytes(part) -> int:
    return part[0].nbytes + part[1].nbytes if isinstance(part, tuple) else part.nbytes


def of_words(words: np.ndarray, pops: tuple[int, ...]) -> Summary:
    """The summary of a whole row (`words` is kept where dense): no part, whole words, or the
    nonzero words with their bits."""
    idx = nonzero_words(words)
    if not idx.size:
        return Summary((), pops)
    if idx.size * DENSE > words.size:
        return Summary((words,), pops)
    return Summary(((idx, words[idx]),), pops)


def of_parts(parts: list, n_words: int, pops: tuple[int, ...]) -> Summary:
    """A summary of these parts, merged into one where there are more than MAX_PARTS."""
    if len(parts) <= MAX_PARTS:
        return Summary(tuple(parts), pops)
    words = np.zeros(n_words, dtype=np.uint32)
    or_parts(parts, words)
    return of_words(words, pops)
