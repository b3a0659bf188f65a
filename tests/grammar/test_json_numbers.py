"""Bounded JSON numbers: the automata accept exactly the numbers inside the bounds."""

from __future__ import annotations

import json
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.automata import compile_ir
from constrain.grammar.json_schema.numbers import decimal_ir, integer_bounds, integer_ir

bound = st.one_of(st.none(), st.integers(-30, 30))


def _accepts(dfa, text: str) -> bool:
    s = dfa.walk(0, text.encode())
    return s >= 0 and dfa.is_accepting(s)


def _ok(x: Decimal, lo, lo_ex, hi, hi_ex) -> bool:
    if lo is not None and (x <= lo if lo_ex else x < lo):
        return False
    if hi is not None and (x >= hi if hi_ex else x > hi):
        return False
    return True


texts = st.one_of(
    st.integers(-40, 40).map(str),
    st.decimals(-40, 40, places=2, allow_nan=False).map(lambda d: format(d, "f")),
    st.sampled_from(["0", "-0.5", "0.0", "-0.0", "1.00", "00", "1.", ".5", "1e2", "-", "30.000", "-30.01"]),
)


@settings(max_examples=400, deadline=None)
@given(bound, st.booleans(), bound, st.booleans(), st.lists(texts, min_size=1, max_size=12))
def test_decimals_between_integral_bounds(lo, lo_ex, hi, hi_ex, probes):
    dfa = None
    try:
        dfa = compile_ir(decimal_ir(lo, lo_ex, hi, hi_ex))
    except Exception as exc:  # empty range: nothing may be inside
        assert "empty" in str(exc)
    for text in probes:
        try:
            value = json.loads(text)
            valid_syntax = isinstance(value, (int, float)) and "e" not in text.lower()
        except ValueError:
            valid_syntax = False
        expected = valid_syntax and _ok(Decimal(text), lo, lo_ex, hi, hi_ex)
        got = dfa is not None and _accepts(dfa, text)
        assert got == expected, (lo, lo_ex, hi, hi_ex, text)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.none(), st.floats(-50, 50)), st.booleans(), st.one_of(st.none(), st.floats(-50, 50)), st.booleans(), st.integers(-60, 60))
def test_integers_with_any_bounds(lo, lo_ex, hi, hi_ex, probe):
    schema = {"minimum": lo, "maximum": hi}
    if lo is None:
        del schema["minimum"]
    if hi is None:
        del schema["maximum"]
    if lo_ex and lo is not None:
        schema["exclusiveMinimum"] = schema.pop("minimum")
    if hi_ex and hi is not None:
        schema["exclusiveMaximum"] = schema.pop("maximum")
    bounds = integer_bounds(schema, True)
    try:
        dfa = compile_ir(integer_ir(*bounds))
    except Exception:
        dfa = None
    expected = _ok(Decimal(probe), *[Decimal(str(b)) if isinstance(b, float) else b for b in bounds])
    for text in (str(probe), f"{probe}.0"):
        assert (dfa is not None and _accepts(dfa, text)) == expected, (schema, text)
