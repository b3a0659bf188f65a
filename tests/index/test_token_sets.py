"""Token sets (token_sets.py) equal a per-token reading of their definitions, on Llama 3."""

from __future__ import annotations

import numpy as np
import pytest

from constrain.index.token_sets import token_set


def _naive(data: bytes, how: str, settle: frozenset, after: frozenset) -> bool:
    if how == "any":
        return any(c in settle for c in data)
    if how == "late":
        return any(c in settle for c in data[1:])
    if how in ("two_after_quote", "risky"):
        opener = data.find(b'"' if how == "two_after_quote" else b"[")
        if opener < 0:
            return False
        data = data[opener + 1 :]
    firsts = [i for i, c in enumerate(data) if c in after]
    return bool(firsts) and any(c in settle for c in data[firsts[0] + 1 :])


@pytest.mark.parametrize("how", ["any", "late", "two", "two_after_quote", "risky"])
@pytest.mark.parametrize("settle, after", [(frozenset(b'"'), frozenset(b",]")), (frozenset(b'"},]el'), frozenset(b", \n]"))])
def test_token_sets_match_their_definition(how, settle, after, llama3):
    special = frozenset(llama3.special_ids)
    words = (llama3.size + 31) // 32
    bits = np.unpackbits(token_set(llama3.token_bytes, special, words, how, settle, after), bitorder="little")
    for t, data in enumerate(llama3.token_bytes):
        expected = bool(data) and t not in special and _naive(data, how, settle, after)
        assert bool(bits[t]) == expected, (t, data)
