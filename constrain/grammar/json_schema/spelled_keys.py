"""The DFA of "any JSON string except these keys", built directly from the keys' spellings.

Every object that allows unnamed keys needs this language (every spelling of every string
whose value is not a named key). As a difference of automata it costs an NFA, a subset
construction and two minimizations per object; here it is a trie over the keys' spellings
(each character raw, as a short escape, as `\\uXXXX` in either letter case, or a surrogate
pair: the same spellings as lexical.encode_chars) whose missing edges continue in the
any-string DFA. Trie nodes of keys that end alike merge (one pass over the acyclic trie), so
the result is the minimal DFA, as a difference of automata would give it.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...automata import DFA
from ...automata.dfa import trusted_dfa
from ...automata.charset import contains
from .lexical import SHORT_ESCAPES, UNESCAPED



def _escape(unit: int) -> list[tuple[int, ...]]:
    """`\\uXXXX` for one UTF-16 unit: byte sets (hex letters in either case)."""
    out: list[tuple[int, ...]] = [(0x5C,), (0x75,)]
    for d in f"{unit:04x}":
        out.append((ord(d),) if d.isdigit() else (ord(d), ord(d.upper())))
    return out


@lru_cache(maxsize=4096)
def spellings(c: int) -> tuple[list[tuple[int, ...]], ...]:
    """Every JSON spelling of code point `c`, each a list of byte sets (none for a lone
    surrogate, which JSON text cannot carry)."""
    if 0xD800 <= c <= 0xDFFF:
        return ()
    out = []
    if contains(UNESCAPED, c):
        out.append([(b,) for b in chr(c).encode("utf-8")])
    if c in SHORT_ESCAPES:
        out.append([(b,) for b in SHORT_ESCAPES[c].encode("ascii")])
    if c <= 0xFFFF:
        out.append(_escape(c))
    else:
        v = c - 0x10000
        out.append(_escape(0xD800 + (v >> 10)) + _escape(0xDC00 + (v & 0x3FF)))
    return tuple(out)


def other_keys_dfa(any_string: DFA, named: tuple[str, ...]) -> DFA:
    """Strings of `any_string` (the DFA of every quoted JSON string) that spell none of `named`.

    Trie nodes are states that also know where `any_string` is (its state after the same
    bytes); a byte the trie lacks continues in a copy of `any_string`; a closing quote after a
    whole named key leads nowhere. Built in numba (key_trie.py) from the keys' spellings."""
    from .key_trie import other_keys_arrays  # numba loads on first use

    cps: list[int] = []
    chars_per_key: list[int] = []
    forms_per_char: list[int] = []
    sets_per_form: list[int] = []
    bytes_per_set: list[int] = []
    set_bytes: list[int] = []
    for key in named:
        parts = _key_parts(key)
        if parts is None:
            continue  # a lone surrogate: no JSON text spells this key
        cps += parts[0]
        chars_per_key.append(len(parts[0]))
        forms_per_char += parts[1]
        sets_per_form += parts[2]
        bytes_per_set += parts[3]
        set_bytes += parts[4]
    if not chars_per_key:
        return any_string  # no key has a JSON spelling: nothing to exclude
    classes, table, accepting, inside = other_keys_arrays(
        *_any_string_arrays(any_string),
        _ints(chars_per_key), _ints(cps), _ints(forms_per_char), _ints(sets_per_form), _ints(bytes_per_set),
        _ints(set_bytes), 2 + len(bytes_per_set),
    )
    if not inside:
        raise ValueError("a key spelling that any_string rejects: not the DFA of every JSON string")
    # (tests/grammar/test_spelled_keys.py checks the arrays and that the result is minimal)
    return trusted_dfa(classes, _NO_CALLS, table, accepting, minimal=any_string.minimal)


@lru_cache(maxsize=8)
def _any_string_arrays(any_string: DFA) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(next state per state and byte, class per byte, accepting) of any_string (one DFA in
    practice, held here by identity)."""
    rows = np.ascontiguousarray(any_string.table[:, any_string.byte_classes], dtype=np.int64)
    return rows, np.asarray(any_string.byte_classes, dtype=np.int64), np.asarray(any_string.accepting)


_NO_CALLS = np.zeros(0, dtype=np.int32)


def _ints(xs: list[int]) -> np.ndarray:
    return np.array(xs, dtype=np.int64)


@lru_cache(maxsize=8192)
def _key_parts(key: str) -> tuple[list[int], list[int], list[int], list[int], list[int]] | None:
    """A key's spellings as flat lists (code points; forms per character; byte sets per form;
    bytes per set; the bytes), or None if one of its characters has no spelling."""
    cps, forms_per_char, sets_per_form, bytes_per_set, flat = [], [], [], [], []
    for ch in key:
        parts = _char_parts(ord(ch))
        if parts is None:
            return None
        cps.append(ord(ch))
        forms_per_char.append(parts[0])
        sets_per_form += parts[1]
        bytes_per_set += parts[2]
        flat += parts[3]
    return cps, forms_per_char, sets_per_form, bytes_per_set, flat


@lru_cache(maxsize=4096)
def _char_parts(c: int) -> tuple[int, list[int], list[int], list[int]] | None:
    """One character's part of _key_parts (keys share their characters)."""
    forms = spellings(c)
    if not forms:
        return None
    sets_per_form = [len(form) for form in forms]
    bytes_per_set = [len(byte_set) for form in forms for byte_set in form]
    flat = [b for form in forms for byte_set in form for b in byte_set]
    return len(forms), sets_per_form, bytes_per_set, flat


def other_keys_bound(any_string: DFA, named: tuple[str, ...]) -> int:
    """At most how many states other_keys_dfa(any_string, named) has (without building it):
    a trie node per byte set of every spelling, plus the copy of any_string."""
    return 2 + any_string.n_states + sum(_spelled_length(ord(ch)) for key in named for ch in key)


@lru_cache(maxsize=4096)
def _spelled_length(c: int) -> int:
    return sum(len(form) for form in spellings(c))
