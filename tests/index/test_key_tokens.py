"""key_tokens.py: tokens by the object key text they spell, on a toy vocabulary and Llama 3."""

from __future__ import annotations

import numpy as np
import pytest

from constrain.index.key_tokens import KeyTokens, escape_pending, first_unescaped_quote, key_tokens

TOY = [b"", b'"', b'":', b'name"', b'name', b'na', b'"na', b',"name":', b' "id"', b'\\"', b'a\\"b"', b'1,"x', b'"},"k":1,"j"', b'":"",', b"{"]


def _members(words: np.ndarray) -> set[int]:
    return set(np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")).tolist())


@pytest.fixture(scope="module")
def toy() -> KeyTokens:
    return KeyTokens(TOY, frozenset({14}), 1)


def test_first_unescaped_quote_and_pending_escapes():
    assert first_unescaped_quote(b'ab"c', 0) == 2
    assert first_unescaped_quote(b'a\\"b"', 0) == 4
    assert first_unescaped_quote(b'a\\\\"', 0) == 3
    assert first_unescaped_quote(b"abc", 0) is None
    assert first_unescaped_quote(b'x"a"', 2) == 3
    assert escape_pending(b"ab\\") and escape_pending(b"\\u00") and escape_pending(b"a\\u12")
    assert not escape_pending(b"ab") and not escape_pending(b"\\u0062") and not escape_pending(b"\\\\")


def test_lookups_by_key_text(toy):
    assert toy.after[b""] == [1, 2, 6, 12, 13]
    assert toy.after[b"name"] == [3]
    assert toy.after[b"a\\\"b"] == [10]  # (the escaped quote is key text)
    assert toy.closed[b"name"] == [7] and toy.closed[b"id"] == [8]
    assert toy.opened[b"na"] == [6] and toy.opened[b""] == [1]
    assert toy.by_bytes[b"name"] == [4] and 0 not in toy.by_bytes.get(b"", [])
    assert 14 not in toy.by_bytes.get(b"{", [])  # special ids are never text


def test_shapes_that_are_stepped(toy):
    assert _members(toy.quotes) == {t for t, d in enumerate(TOY) if b'"' in d and t != 14}
    # a key opens past the token's start: after a value (`1,"x`), after a brace and members
    assert _members(toy.complex) == {11}
    assert _members(toy.complex_closing) == {12}
    assert _members(toy.escaped) == {10}  # `\\"` alone closes nothing
    assert set(toy.spanning) == {12, 13}  # a key, a colon, then `,` or `}`


def test_llama3_shapes(llama3):
    keys = key_tokens(llama3.token_bytes, frozenset(llama3.special_ids), (len(llama3.token_bytes) + 31) // 32)
    assert keys is key_tokens(llama3.token_bytes, frozenset(llama3.special_ids), (len(llama3.token_bytes) + 31) // 32)
    ids = {d: t for t, d in enumerate(llama3.token_bytes)}
    assert ids[b'":'] in keys.after[b""] and ids[b'":"'] in keys.after[b""]
    assert ids[b'","'] in keys.after[b""] and ids[b'","'] in keys.closed[b","]  # (where a key may open: the key ",")
    assert ids[b',"'] in keys.opened[b""]
    assert ids[b'"name'] in keys.opened[b"name"]
    assert len(_members(keys.complex) | _members(keys.complex_closing)) < 40
    assert {llama3.token_bytes[t] for t in keys.spanning} >= {b'":"",\n', b'":"","'}
