"""Integer range automata accept exactly the canonical JSON integers in the range."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.automata import compile_ir
from constrain.automata.numeric import integer_range

JSON_INT = re.compile(r"-?(0|[1-9][0-9]*)")


def _accepts(dfa, text: str) -> bool:
    s = dfa.walk(0, text.encode())
    return s >= 0 and dfa.is_accepting(s)


def _in_range(text: str, lo, hi) -> bool:
    if not JSON_INT.fullmatch(text):
        return False
    v = int(text)
    return (lo is None or v >= lo) and (hi is None or v <= hi)


bound = st.one_of(st.none(), st.integers(-10**6, 10**6), st.integers(-120, 120))


@settings(max_examples=300, deadline=None)
@given(bound, bound, st.lists(st.integers(-2 * 10**6, 2 * 10**6), max_size=30), st.data())
def test_exact_on_random_bounds(lo, hi, probes, data):
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
    dfa = compile_ir(integer_range(lo, hi))
    edges = [x for b in (lo, hi) if b is not None for x in (b - 1, b, b + 1)]
    texts = [str(v) for v in probes + edges + [0, -1, 1, 9, 10, 99, 100]]
    texts += ["-0", "00", "01", "-01", "+1", "", "-", "1.0", "1e3"]
    texts += [data.draw(st.from_regex(JSON_INT, fullmatch=True)) for _ in range(5)]
    for t in texts:
        assert _accepts(dfa, t) == _in_range(t, lo, hi), (lo, hi, t)


def test_every_prefix_of_a_member_is_alive():
    dfa = compile_ir(integer_range(17, 2024))
    for v in (17, 99, 100, 999, 2024, 1000):
        text = str(v)
        for k in range(len(text) + 1):
            assert dfa.walk(0, text[:k].encode()) >= 0
    assert dfa.walk(0, b"3") >= 0  # 3 can still grow into 30..2024
    assert dfa.walk(0, b"2025") < 0


def test_empty_range_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        integer_range(5, 4)
