"""Token sets for distinct_calls.py: which tokens hold bytes that could settle an array item.

Computed over all token bytes at once (NumPy over one flat array, per vocabulary) and shared by
every grammar over that vocabulary: a mask then only steps the candidates in these sets.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


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
    flat, owner, start, ok_ids, shared = _flat_tokens(token_bytes, special)
    key = (how, byte_set, after_item)
    hit = shared.get(key)
    if hit is not None:
        return hit
    n = len(token_bytes)
    pos = np.arange(flat.size, dtype=np.int64) - start[owner]
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
    ok &= ok_ids
    words = np.zeros(n_words, dtype=np.uint32)
    ids = np.flatnonzero(ok)
    np.bitwise_or.at(words, ids >> 5, (np.uint32(1) << (ids & 31).astype(np.uint32)))
    out = words.view(np.uint8)
    out.setflags(write=False)
    shared[key] = out
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


_FLAT: dict[int, tuple] = {}


def _flat_tokens(token_bytes: Sequence[bytes], special: frozenset) -> tuple:
    """(all token bytes in one array, the token of each byte, each token's first byte offset,
    bool per token: a text token, the token sets made from them so far), per vocabulary (the
    list is kept alive in the entry, so its id stays its own)."""
    hit = _FLAT.get(id(token_bytes))
    if hit is not None and hit[0] is token_bytes:
        return hit[1]
    lengths = np.fromiter((len(t) for t in token_bytes), dtype=np.int64, count=len(token_bytes))
    flat = np.frombuffer(b"".join(token_bytes), dtype=np.uint8)
    owner = np.repeat(np.arange(len(token_bytes), dtype=np.int64), lengths)
    start = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    ok_ids = lengths > 0
    if special:
        ok_ids[[t for t in special if t < len(token_bytes)]] = False
    value = (flat, owner, start, ok_ids, {})
    if len(_FLAT) > 4:
        _FLAT.clear()
    _FLAT[id(token_bytes)] = (token_bytes, value)
    return value
