"""Bounded JSON numbers: the automata accept exactly the numbers inside the bounds."""

from __future__ import annotations

import json
import re
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.automata import compile_ir
from constrain.grammar.json_schema.numbers import decimal_ir, integer_bounds, integer_ir

bound = st.one_of(st.none(), st.integers(-30, 30))


def _accepts(dfa, text: str) -> bool:
    s = dfa.walk(0, text.encode())
    return s >= 0 and dfa.is_accepting(s)


def _exponent_free_number(text: str) -> bool:
    """Is `text` a JSON number written without an exponent (what bounded numbers use)?"""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, (int, float)) and "e" not in text.lower()


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
        expected = _exponent_free_number(text) and _ok(Decimal(text), lo, lo_ex, hi, hi_ex)
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


decimal_bound = st.one_of(st.none(), st.integers(-30, 30), st.decimals(-30, 30, places=3, allow_nan=False).map(float))
decimal_texts = st.one_of(
    texts,
    st.decimals(-31, 31, places=4, allow_nan=False).map(lambda d: format(d, "f")),
    st.decimals(-31, 31, places=3, allow_nan=False).map(lambda d: format(d, "f") + "000"),
)


@settings(max_examples=400, deadline=None)
@given(decimal_bound, st.booleans(), decimal_bound, st.booleans(), st.lists(decimal_texts, min_size=1, max_size=12))
def test_decimals_between_fractional_bounds(lo, lo_ex, hi, hi_ex, probes):
    """Bounds like 1.1 or -0.25 compare digit by digit at the bound's integer part."""
    dfa = None
    try:
        dfa = compile_ir(decimal_ir(lo, lo_ex, hi, hi_ex))
    except Exception as exc:  # empty range: nothing may be inside
        assert "empty" in str(exc)
    as_dec = [None if b is None else Decimal(repr(b)) if isinstance(b, float) else Decimal(b) for b in (lo, hi)]
    for text in probes:
        expected = _exponent_free_number(text) and _ok(Decimal(text), as_dec[0], lo_ex, as_dec[1], hi_ex)
        got = dfa is not None and _accepts(dfa, text)
        assert got == expected, (lo, lo_ex, hi, hi_ex, text)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40), st.integers(1, 3), st.lists(decimal_texts, min_size=1, max_size=12))
def test_decimal_multiple_of(m, d, probes):
    """multipleOf m/10^d: exact on exponent-free numbers (Decimal arithmetic is the oracle)."""
    from constrain.automata.numeric import decimal_multiple_of

    dfa = decimal_multiple_of(m, d)
    k = Decimal(m).scaleb(-d)
    for text in probes:
        expected = _exponent_free_number(text) and (Decimal(text) / k) % 1 == 0
        assert _accepts(dfa, text) == expected, (m, d, text)


sign_texts = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(json.dumps),
    st.from_regex(r"-?(0|[1-9][0-9]{0,3})(\.[0-9]{1,4})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
    st.sampled_from(["0", "-0", "0.0", "-0e5", "0E-3", "1e-400", "-1e-400", "1e400", "00", "1.", ".5", "-", "1e"]),
)


@settings(max_examples=300, deadline=None)
@given(
    bounds=st.sampled_from([("minimum", None), ("exclusiveMinimum", None), (None, "maximum"), (None, "exclusiveMaximum"), ("minimum", "maximum")]),
    text=sign_texts,
)
def test_numbers_bounded_by_zero_take_every_spelling(bounds, text):
    """minimum/maximum 0 (exclusive or not) allow exponents; the jsonschema library (floats)
    decides, so 1e-400 (0.0 there) is not > 0."""
    import jsonschema

    from constrain.grammar.json_schema.numbers import number_node

    schema = {"type": "number", **{k: 0 for k in bounds if k}}
    dfa = compile_ir(number_node(None, schema, "#", False))
    try:
        value = json.loads(text)
    except ValueError:
        valid = False
    else:
        valid = jsonschema.Draft202012Validator(schema).is_valid(value)
    if _accepts(dfa, text):
        assert valid, (schema, text)
    elif valid:  # the one narrowing: negative exponents below -299
        exponent = re.search(r"[eE]-([0-9]+)$", text)
        assert exponent and int(exponent.group(1)) > 299, (schema, text)
