"""The candidate lists of the tests' random walks, filtered with numpy.

Inside free text a mask allows most of a 128k vocabulary, and the walks used to filter it id by
id in Python (`[t for t in allowed if t not in eos]`, then the short ones): tens of milliseconds
a step, most of some tests' time. These give the same ids in the same order (so a seeded
`rng.choice` over them takes the same steps), as numpy int64 arrays.

On pytest's `pythonpath` (pyproject.toml), like regex_oracle.
"""

from __future__ import annotations

from typing import Iterable, Optional

import numpy as np

from constrain import Vocabulary

from regex_oracle import _per_vocab


def token_lengths(vocab: Vocabulary) -> np.ndarray:
    """Per token id, the length of its bytes (kept per vocabulary)."""
    return _per_vocab("token lengths", vocab, lambda v: np.array([len(b) for b in v.token_bytes], dtype=np.int64))


def without(ids: Iterable[int], excluded: Iterable[int]) -> np.ndarray:
    """`ids` (an array, or anything np.asarray takes) less `excluded` (e.g. the EOS ids), in order."""
    ids = np.asarray(ids, dtype=np.int64)
    return ids[~np.isin(ids, np.fromiter(excluded, dtype=np.int64))]


def text_ids(ids: Iterable[int], vocab: Vocabulary, excluded: Optional[Iterable[int]] = None) -> np.ndarray:
    """`ids` less the vocabulary's EOS ids (or `excluded`), in order."""
    return without(ids, vocab.eos_token_ids if excluded is None else excluded)


def short_or_all(ids: np.ndarray, vocab: Vocabulary, max_bytes: int) -> np.ndarray:
    """The ids of `ids` whose bytes are at most `max_bytes` long, in order; all of `ids` if none is
    (`[t for t in ids if len(token_bytes[t]) <= max_bytes] or ids`)."""
    ids = np.asarray(ids, dtype=np.int64)
    short = ids[token_lengths(vocab)[ids] <= max_bytes]
    return short if short.size else ids


def holding(vocab: Vocabulary, chars: bytes) -> np.ndarray:
    """Per token id: do its bytes hold one of `chars` (kept per vocabulary and `chars`)."""
    wanted = set(chars)
    return _per_vocab(f"holding {chars!r}", vocab, lambda v: np.array([bool(set(b) & wanted) for b in v.token_bytes], dtype=bool))
