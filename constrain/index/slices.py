"""Vocabulary slices: whole groups of tokens allowed at once in free-text states.

A slice is the set of tokens that split into *units* of one small language: single bytes of a
set (printable ASCII without `"` and `\\`; identifier bytes, with or without spaces) or whole
UTF-8 characters other than `"`, `\\` and controls (121k of Llama 3's 128k tokens). Its units
are given by a little byte automaton, `unit_next[s, b]` (-1: byte b not allowed in unit state s;
back to 0: a unit ends).

Where the slice depth analysis (slice_depth.py) proves that from a DFA state exactly the slice
tokens of at most L units are readable, and that none of them can leave the rule on the way,
the precomputed mask of those tokens is OR-ed in and only the *rest* trie, the tokens outside
the slice, is walked. This is what keeps wide states cheap on first visit: string bodies,
keys beside named keys, and length-bounded strings, whose every character is a new state.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .trie import TokenTrie

MIN_SLICE_TOKENS = 1024  # a smaller slice saves less than the check costs


def byte_units(byte_set: frozenset[int]) -> np.ndarray:
    """The unit automaton of single bytes from `byte_set`."""
    table = np.full((1, 256), -1, dtype=np.int32)
    table[0, sorted(byte_set)] = 0
    return table


def utf8_text_units() -> np.ndarray:
    """The unit automaton of one well-formed UTF-8 character (no surrogates, no overlongs)
    that a JSON string holds unescaped: anything but `"`, `\\` and controls below 0x20."""
    t = np.full((8, 256), -1, dtype=np.int32)
    t[0, [b for b in range(0x20, 0x80) if b not in (0x22, 0x5C)]] = 0
    # Lead bytes, then the continuation bytes each allows (RFC 3629 table).
    t[0, 0xC2:0xE0] = 1
    t[0, 0xE0] = 2
    t[0, 0xE1:0xED] = 3
    t[0, 0xED] = 4
    t[0, 0xEE:0xF0] = 3
    t[0, 0xF0] = 5
    t[0, 0xF1:0xF4] = 6
    t[0, 0xF4] = 7
    t[1, 0x80:0xC0] = 0
    t[2, 0xA0:0xC0] = 1
    t[3, 0x80:0xC0] = 1
    t[4, 0x80:0xA0] = 1
    t[5, 0x90:0xC0] = 3
    t[6, 0x80:0xC0] = 3
    t[7, 0x80:0x90] = 3
    return t


_NAME = frozenset(range(0x30, 0x3A)) | frozenset(range(0x41, 0x5B)) | frozenset(range(0x61, 0x7B)) | {0x5F}

# Unit automata worth a slice, widest first (each slice holds the next): any JSON string text,
# printable ASCII text, identifier-like text with spaces, a name's bytes alone (a grammar's NAME
# terminal reads every token of it: 34,698 of Llama 3's; SQL's keyword-excluding NAME has 91
# states, each of whose first masks walked the whole trie). A state takes the first slice that
# applies.
DEFAULT_UNITS: tuple[np.ndarray, ...] = (
    utf8_text_units(),
    byte_units(frozenset(range(0x20, 0x7F)) - {0x22, 0x5C}),
    byte_units(_NAME | {0x20}),
    byte_units(_NAME),
)


def _checked(unit_next: np.ndarray) -> np.ndarray:
    """A read-only int32 copy, validated: the numba kernels index with it unchecked."""
    table = np.array(unit_next, dtype=np.int32)
    if table.ndim != 2 or table.shape[1] != 256 or table.shape[0] == 0:
        raise ValueError("a unit automaton has 256 columns and at least one state")
    if table.min() < -1 or table.max() >= table.shape[0]:
        raise ValueError("unit automaton points outside its states")
    table.setflags(write=False)
    return table


class TokenSlice:
    """`masks_upto[L]`: the slice tokens of at most L units (L up to `max_units`, the whole
    slice); `rest`: the trie of every other token; `whole_units`: the bytes that are a unit
    alone (at a state where the slice applies, they all live or all die)."""

    __slots__ = ("unit_next", "whole_units", "masks_upto", "max_units", "rest", "n_tokens")

    def __init__(self, unit_next: np.ndarray, masks_upto: np.ndarray, rest: TokenTrie, n_tokens: int) -> None:
        self.unit_next = _checked(unit_next)
        self.whole_units = np.nonzero(self.unit_next[0] == 0)[0]
        self.masks_upto = masks_upto
        self.max_units = masks_upto.shape[0] - 1
        self.rest = rest
        self.n_tokens = n_tokens


def build_slices(
    token_bytes: Sequence[bytes],
    excluded: frozenset[int],
    trie: TokenTrie,
    unit_automata: Sequence[np.ndarray] = DEFAULT_UNITS,
) -> tuple[TokenSlice, ...]:
    """One slice per unit automaton with enough tokens; `trie` is the full trie of the same
    tokens (its walk finds every token's unit count)."""
    from .slice_depth import token_units  # numba loads with the index, not on `import constrain`

    slices = []
    if trie.vocab_size != len(token_bytes):
        raise ValueError("the trie is not of these tokens")
    for unit_automaton in unit_automata:
        unit_next = _checked(unit_automaton)
        units = np.full(len(token_bytes), -1, dtype=np.int32)
        token_units(trie.packed, trie.end, trie.tok1, trie.tok_ptr, trie.tok_ids, trie.max_depth, unit_next, units)
        inside = np.nonzero(units > 0)[0]
        if inside.size < MIN_SLICE_TOKENS:
            continue
        max_units = int(units.max())
        masks = np.zeros((max_units + 1, trie.n_words), dtype=np.uint32)
        bits = np.uint32(1) << (inside & 31).astype(np.uint32)
        np.bitwise_or.at(masks, (units[inside], inside >> 5), bits)
        np.bitwise_or.accumulate(masks, axis=0, out=masks)
        masks.setflags(write=False)
        rest_bytes = list(token_bytes)
        for tid in inside.tolist():
            rest_bytes[tid] = b""
        slices.append(TokenSlice(unit_next, masks, TokenTrie(rest_bytes, excluded), int(inside.size)))
    return tuple(slices)
