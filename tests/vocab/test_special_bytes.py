"""Special tokens' virtual spellings: no text holds them, and tokens that could only match
them are out of the trie."""

from __future__ import annotations

import pytest

from constrain.vocab.special_bytes import MARK, trie_token_bytes, virtual_bytes


def test_spellings_are_distinct_fixed_width_and_not_utf8():
    spellings = {virtual_bytes(t) for t in (0, 1, 255, 256, 128009, (1 << 24) - 1)}
    assert len(spellings) == 6 and all(len(s) == 4 and s[0] == MARK for s in spellings)
    for s in spellings:
        with pytest.raises(UnicodeDecodeError):
            s.decode("utf-8")
    with pytest.raises(ValueError):
        virtual_bytes(1 << 24)


def test_the_trie_holds_specials_under_their_spellings_and_no_non_utf8_bytes():
    token_bytes = [b"a", b"\xff", b"<|eot_id|>", b"ab\xf5", b"\xc3\xa9", b""]
    spelled = trie_token_bytes(token_bytes, {2})
    assert spelled == [b"a", b"", virtual_bytes(2), b"", b"\xc3\xa9", b""]
