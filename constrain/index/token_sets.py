"""Token sets for distinct_calls.py: which tokens hold bytes that could settle an array item.

Computed with NumPy over the bytes of the tokens that hold a byte the set needs (its bytes in
one flat array per vocabulary), and shared by every grammar over that vocabulary: a mask then
only steps the candidates in these sets.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .row_bits import words_of


def token_set(
    token_bytes: Sequence[bytes], special: frozenset, n_words: int, how: str, byte_set: frozenset, after_item: frozenset,
) -> np.ndarray:
    """Tokens (uint8 bytes of a bitmask of `n_words` words) that might settle a value
    (`after_item`: the bytes an array reads right after an item). "any": with a byte of
    `byte_set`; "late": with one after their first byte (a new item starts in the token);
    "two": with a byte that follows an item before one of `byte_set` (an item settles,
    the next starts and settles); "two_after_quote": the same after a `"` (inside a string
    the bytes before its closing quote settle nothing); "risky": the same after a `[` (a
    whole marked array could open and repeat an item inside one token). Shared by every
    grammar over the vocabulary."""
    vocab = _vocab(token_bytes, special)
    key = (how, byte_set, after_item)
    hit = vocab.sets.get(key)
    if hit is not None:
        return hit
    # Only tokens holding a byte that the definition needs can be in the set: work on those
    # (a few thousand tokens, not the whole vocabulary's bytes, for most sets).
    needed = {"any": byte_set, "late": byte_set, "two": after_item, "two_after_quote": frozenset(b'"'), "risky": frozenset(b"[")}[how]
    ids = vocab.holding(needed)
    flat, owner, pos = vocab.bytes_of(ids)
    n = len(ids)
    settles = _byte_table(byte_set)[flat]
    after = _byte_table(after_item)[flat]
    ok = np.zeros(n, dtype=np.bool_)
    if how == "any":
        ok[owner[settles]] = True
    elif how == "late":
        ok[owner[settles & (pos > 0)]] = True
    else:
        if how in ("two_after_quote", "risky"):
            opener = flat == ord('"' if how == "two_after_quote" else "[")
            after &= pos > _first(opener, owner, pos, n)[owner]
        ok = _first(after, owner, pos, n) < _last(settles, owner, pos, n)
    ids = ids[ok & vocab.text[ids]]
    out = words_of(ids, n_words).view(np.uint8)
    out.setflags(write=False)
    vocab.sets[key] = out
    return out


_NONE = np.iinfo(np.int64).max


def _first(mask: np.ndarray, owner: np.ndarray, pos: np.ndarray, n: int) -> np.ndarray:
    """Per token, the position of its first byte where `mask` holds (_NONE if none)."""
    out = np.full(n, _NONE, dtype=np.int64)
    hits = np.flatnonzero(mask)
    tokens, first = np.unique(owner[hits], return_index=True)
    out[tokens] = pos[hits[first]]
    return out


def _last(mask: np.ndarray, owner: np.ndarray, pos: np.ndarray, n: int) -> np.ndarray:
    """Per token, the position of its last byte where `mask` holds (-1 if none)."""
    out = np.full(n, -1, dtype=np.int64)
    hits = np.flatnonzero(mask)[::-1]
    tokens, first = np.unique(owner[hits], return_index=True)
    out[tokens] = pos[hits[first]]
    return out


def _byte_table(byte_set: frozenset) -> np.ndarray:
    table = np.zeros(256, dtype=np.bool_)
    table[sorted(byte_set)] = True
    return table


class _Vocab:
    """One vocabulary's bytes in one array (and where each token ends), and the token sets made
    from them so far."""

    def __init__(self, token_bytes: Sequence[bytes], special: frozenset) -> None:
        self.lengths = np.fromiter(map(len, token_bytes), dtype=np.int64, count=len(token_bytes))
        self.ends = np.cumsum(self.lengths)
        self.flat = np.frombuffer(b"".join(token_bytes), dtype=np.uint8)
        self.text = self.lengths > 0
        if special:
            self.text[[t for t in special if t < len(token_bytes)]] = False
        self._holding: dict[frozenset, np.ndarray] = {}
        self.sets: dict[tuple, np.ndarray] = {}

    def holding(self, byte_set: frozenset) -> np.ndarray:
        """The tokens (ascending) with a byte of `byte_set` (kept: most sets need `[` or `"`)."""
        hit = self._holding.get(byte_set)
        if hit is not None:
            return hit
        tokens = np.searchsorted(self.ends, np.flatnonzero(_byte_table(byte_set)[self.flat]), side="right")
        keep = np.ones(tokens.size, dtype=np.bool_)
        keep[1:] = tokens[1:] != tokens[:-1]
        hit = self._holding[byte_set] = tokens[keep]
        return hit

    def bytes_of(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The bytes of tokens `ids` in one array, the index in `ids` of each byte's token, and
        each byte's position in its token."""
        lengths = self.lengths[ids]
        owner = np.repeat(np.arange(ids.size, dtype=np.int64), lengths)
        first = np.cumsum(lengths) - lengths  # each token's first byte in the result
        pos = np.arange(owner.size, dtype=np.int64) - first[owner]
        starts = self.ends[ids] - lengths  # ... and in the whole vocabulary
        return self.flat[starts[owner] + pos], owner, pos


_VOCABS: dict[int, tuple] = {}


def _vocab(token_bytes: Sequence[bytes], special: frozenset) -> _Vocab:
    """Per vocabulary (the list is kept alive in the entry, so its id stays its own)."""
    hit = _VOCABS.get(id(token_bytes))
    if hit is not None and hit[0] is token_bytes and hit[1] == special:
        return hit[2]
    value = _Vocab(token_bytes, special)
    if len(_VOCABS) > 4:
        _VOCABS.clear()
    _VOCABS[id(token_bytes)] = (token_bytes, special, value)
    return value
