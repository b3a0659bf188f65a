"""Tokens by the object key text they spell, for distinct_keys.py (per vocabulary, shared).

A mask inside an object whose keys must differ removes the tokens that would close a key used
before or leave the key text where only used keys could complete it. Those tokens are found by
looking them up here by the text they spell, not by stepping every token of the mask:

  after: a token read inside a key (its text so far ends cleanly, no escape pending): the
         bytes before its first unescaped `"` (the rest of the key), for tokens with one;
  opening: a token read where a key may open (after `{` or `,`): `ws* (, ws*)? "` then the
         bytes of the key up to its first unescaped `"`; `opened` holds the tokens with no
         closing quote (they end inside the key), `closed` those with one.

The mask steps the tokens these shapes do not describe instead: `complex` ones, with a comma,
a quote and a byte after it past their start (a key opens and goes on inside the token, after
a value or a closing brace), `complex_closing` those of them with a quote after that (the key
may close in the token too); and where keys other than the named ones were used, `escaped` ones,
whose key text before a closing quote has a backslash (an escape may spell a used key otherwise
than canonically).
`spanning` lists the tokens that may close a key and then reach the object's `,` or `}` (a
quote, a colon, then one of those): the object's rule variant (rule_variants.py) changes at
that quote, so the row, walked with the variant before it, may be wrong about them either way.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from .row_bits import words_of

_WS_BYTES = b" \t\n\r"
_WS = frozenset(_WS_BYTES)
_OPEN_AFTER_COMMA = re.compile(rb',[ \t\n\r]*".', re.S)
_MEMBER_THEN_END = re.compile(rb'"[ \t\n\r]*:.*[,}]', re.S)


class KeyTokens:
    """The lookups above for one vocabulary (build with `key_tokens`)."""

    def __init__(self, token_bytes: Sequence[bytes], special: frozenset, n_words: int) -> None:
        self.by_bytes: dict[bytes, list[int]] = {}  # every text token (ids with equal bytes share)
        self.after: dict[bytes, list[int]] = {}
        self.opened: dict[bytes, list[int]] = {}
        self.closed: dict[bytes, list[int]] = {}
        complex_: list[int] = []
        complex_closing: list[int] = []
        spanning: list[int] = []
        escaped: list[int] = []
        quotes: list[int] = []
        self.max_len = 0
        for t, data in enumerate(token_bytes):
            if not data or t in special:
                continue
            self.by_bytes.setdefault(data, []).append(t)
            self.max_len = max(self.max_len, len(data))
            if b'"' not in data:
                continue
            quotes.append(t)
            for found in _OPEN_AFTER_COMMA.finditer(data):
                if data[: found.start()].strip(_WS_BYTES):  # (not the token's own key opening)
                    (complex_closing if first_unescaped_quote(data, found.end() - 1) is not None else complex_).append(t)
                    break
            if _MEMBER_THEN_END.search(data):
                spanning.append(t)
            end = first_unescaped_quote(data, 0)
            if end is not None:
                self.after.setdefault(data[:end], []).append(t)
            start = _key_start(data)
            close = None
            if start is not None:
                close = first_unescaped_quote(data, start)
                if close is None:
                    self.opened.setdefault(data[start:], []).append(t)
                else:
                    self.closed.setdefault(data[start:close], []).append(t)
            if (end is not None and b"\\" in data[:end]) or (close is not None and b"\\" in data[start:close]):
                escaped.append(t)
        self.complex = _bitmask(complex_, n_words)
        self.complex_closing = _bitmask(complex_closing, n_words)
        self.spanning = spanning
        self.escaped = _bitmask(escaped, n_words)
        self.quotes = _bitmask(quotes, n_words)


def first_unescaped_quote(data: bytes, start: int) -> "int | None":
    """The index of the first `"` at or after `start` that ends a JSON string whose text is
    read from `start` with no escape pending (None: there is none)."""
    i, n = start, len(data)
    while i < n:
        b = data[i]
        if b == 0x5C:
            i += 2
        elif b == 0x22:
            return i
        else:
            i += 1
    return None


def escape_pending(text: bytes) -> bool:
    """Does the key text `text` end inside an escape (`\\`, `\\u00`)?"""
    i, n = 0, len(text)
    while i < n:
        if text[i] != 0x5C:
            i += 1
            continue
        if i + 1 >= n:
            return True
        width = 6 if text[i + 1] == 0x75 else 2  # \uXXXX or a short escape
        if i + width > n:
            return True
        i += width
    return False


def _key_start(data: bytes) -> "int | None":
    """After `ws* (, ws*)? "` at the start of `data`: the index past that quote (else None)."""
    i, n = 0, len(data)
    while i < n and data[i] in _WS:
        i += 1
    if i < n and data[i] == 0x2C:
        i += 1
        while i < n and data[i] in _WS:
            i += 1
    if i < n and data[i] == 0x22:
        return i + 1
    return None


def _bitmask(ids: list[int], n_words: int) -> np.ndarray:
    words = words_of(np.asarray(ids, dtype=np.int64), n_words)
    words.setflags(write=False)
    return words


_SHARED: dict[int, tuple] = {}


def key_tokens(token_bytes: Sequence[bytes], special: frozenset, n_words: int) -> KeyTokens:
    """The KeyTokens of a vocabulary, built once (the list is kept in the entry, so its id stays
    its own)."""
    hit = _SHARED.get(id(token_bytes))
    if hit is not None and hit[0] is token_bytes and hit[1].quotes.shape[0] == n_words:
        return hit[1]
    value = KeyTokens(token_bytes, special, n_words)
    if len(_SHARED) > 4:
        _SHARED.clear()
    _SHARED[id(token_bytes)] = (token_bytes, value)
    return value
