"""JSON numbers under bounds, exactly: integers via digit automata, decimals with integral
bounds via integer part ranges plus the fraction rule at the bounds (no exponent when bounded)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Optional

from ...automata import compile_ir, ir, parse_regex
from ...automata.algebra import difference, intersect
from ...automata.numeric import decimal_multiple_of, integer_range, multiple_of, natural_range
from ...errors import EmptyLanguageError
from .keywords import NON_INTEGER, NOT_ENUM, NOT_MULTIPLE_OF
from .lexical import NUMBER

_DIGITS = ir.repeat(ir.chars([(0x30, 0x39)]), 1, None)
_ZEROS = ir.repeat(ir.literal("0"), 1, None)
_FRACTION = ir.concat(ir.literal("."), _DIGITS)
_ZERO_FRACTION = ir.concat(ir.literal("."), _ZEROS)
_NONZERO_FRACTION = ir.concat(ir.literal("."), ir.repeat(ir.chars([(0x30, 0x39)]), 0, None), ir.chars([(0x31, 0x39)]), ir.repeat(ir.chars([(0x30, 0x39)]), 0, None))


def integer_bounds(schema: dict, integral: bool) -> tuple[Optional[float], bool, Optional[float], bool]:
    """(lo, lo_exclusive, hi, hi_exclusive) from minimum/maximum/exclusive* of any draft."""
    lo = schema.get("minimum")
    hi = schema.get("maximum")
    lo_ex = hi_ex = False
    ex_lo, ex_hi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(ex_lo, bool):  # draft 4: a flag on minimum
        lo_ex = ex_lo and lo is not None
    elif ex_lo is not None and (lo is None or ex_lo >= lo):
        lo, lo_ex = ex_lo, True
    if isinstance(ex_hi, bool):
        hi_ex = ex_hi and hi is not None
    elif ex_hi is not None and (hi is None or ex_hi <= hi):
        hi, hi_ex = ex_hi, True
    return lo, lo_ex, hi, hi_ex


def integer_ir(lo, lo_ex, hi, hi_ex, zero_fraction: bool = True) -> ir.Node:
    """Integers in the bounds; also the integral floats like 1.0 that JSON Schema counts, unless
    `zero_fraction` is off (typed outputs: a model that starts "1." may then write zeros forever)."""
    a = None if lo is None else (math.floor(lo) + 1 if lo_ex else math.ceil(lo))
    b = None if hi is None else (math.ceil(hi) - 1 if hi_ex else math.floor(hi))
    if a is not None and b is not None and a > b:
        return ir.NOTHING
    return _integers(a, b, zero_fraction)


@lru_cache(maxsize=1024)
def _integers(a: Optional[int], b: Optional[int], zero_fraction: bool = True) -> ir.Node:
    """One node per bounds: `integer` recurs in every schema, and what the compiler learns
    about a node (hash, callees, size, its rule DFA) stays on it."""
    if not zero_fraction:
        return integer_range(a, b)
    return ir.concat(integer_range(a, b), ir.repeat(_ZERO_FRACTION, 0, 1))


def is_integral(x) -> bool:
    return x is None or (isinstance(x, (int, float)) and float(x).is_integer())


_DIGIT = ir.chars([(0x30, 0x39)])
_ANY_DIGITS = ir.repeat(_DIGIT, 0, None)


def _digit_range(lo: int, hi: int) -> ir.Node:
    return ir.chars([(0x30 + lo, 0x30 + hi)])


def _fraction_at_least(f: str, strict: bool) -> ir.Node:
    """The optional fraction `.F` of a number whose fraction (zeros implied) is >= (or >) the
    digits f (no trailing zeros; "" is zero). At the first digit where F and f differ F must be
    larger; F ending early is smaller (f has a non-zero digit later)."""
    if not f:
        return _NONZERO_FRACTION if strict else ir.repeat(_FRACTION, 0, 1)
    parts = [
        ir.concat(ir.literal("." + f[:i]), _digit_range(int(c) + 1, 9), _ANY_DIGITS)
        for i, c in enumerate(f) if c != "9"
    ]
    if strict:  # equal up to f, then something non-zero
        parts.append(ir.concat(ir.literal("." + f), ir.repeat(ir.literal("0"), 0, None), _digit_range(1, 9), _ANY_DIGITS))
    else:
        parts.append(ir.concat(ir.literal("." + f), _ANY_DIGITS))
    return ir.alt(*parts)


def _fraction_at_most(f: str, strict: bool) -> ir.Node:
    """The optional fraction `.F` of a number whose fraction is <= (or <) the digits f."""
    if not f:
        return ir.NOTHING if strict else ir.repeat(_ZERO_FRACTION, 0, 1)
    parts: list[ir.Node] = [ir.EMPTY]  # no fraction: zero, below f
    for i, c in enumerate(f):
        if i:
            parts.append(ir.literal("." + f[:i]))  # ends early: smaller
        if c != "0":
            parts.append(ir.concat(ir.literal("." + f[:i]), _digit_range(0, int(c) - 1), _ANY_DIGITS))
    if not strict:
        parts.append(ir.concat(ir.literal("." + f), ir.repeat(ir.literal("0"), 0, None)))
    return ir.alt(*parts)


def _split(x) -> tuple[int, str]:
    """A non-negative decimal as (integer part, fraction digits without trailing zeros)."""
    from decimal import Decimal

    d = Decimal(x) if isinstance(x, int) else Decimal(repr(float(x)))
    whole = int(d)
    frac = format(d - whole, "f").partition(".")[2].rstrip("0")
    return whole, frac


def _magnitudes(lo, lo_strict: bool, hi, hi_strict: bool) -> list[ir.Node]:
    """Unsigned decimals m = I(.F)? with lo <(=) m <(=) hi (hi None: unbounded), 0 <= lo."""
    parts: list[ir.Node] = []
    if hi is not None and (hi < lo or (hi == lo and (lo_strict or hi_strict))):
        return parts
    a, fa = _split(lo)
    if hi is None or _split(hi)[0] > a:
        if hi is None or _split(hi)[0] - a >= 2:  # integer parts strictly between: any fraction
            b = None if hi is None else _split(hi)[0] - 1
            parts.append(ir.concat(natural_range(a + 1, b), ir.repeat(_FRACTION, 0, 1)))
        parts.append(ir.concat(natural_range(a, a), _fraction_at_least(fa, lo_strict)))
        if hi is not None:
            b, fb = _split(hi)
            parts.append(ir.concat(natural_range(b, b), _fraction_at_most(fb, hi_strict)))
    else:  # same integer part: the fraction between both
        b, fb = _split(hi)
        both = intersect(compile_ir(_fraction_at_least(fa, lo_strict)), compile_ir(_fraction_at_most(fb, hi_strict)))
        parts.append(ir.concat(natural_range(a, a), ir.Embedded(both)))
    return parts


def decimal_ir(lo, lo_ex: bool, hi, hi_ex: bool) -> ir.Node:
    """Decimals x (no exponent) with lo <(=) x <(=) hi; bounds are numbers or None (open)."""
    parts: list[ir.Node] = []
    if hi is None or hi > 0 or (hi == 0 and not hi_ex):  # x >= 0
        low, strict = (0, False) if lo is None or lo < 0 else (lo, lo_ex)
        parts += _try_parts(_magnitudes, low, strict, hi, hi_ex)
    if (lo is None or lo < 0 or (lo == 0 and not lo_ex)) and (hi is None or hi > 0 or (hi == 0 and not hi_ex)):
        parts.append(ir.concat(ir.literal("-0"), ir.repeat(_ZERO_FRACTION, 0, 1)))  # -0 is 0
    if lo is None or lo < 0:  # x < 0: m = -x > 0
        low, strict = (0, True) if hi is None or hi >= 0 else (-hi, hi_ex)
        for node in _try_parts(_magnitudes, low, strict, None if lo is None else -lo, lo_ex):
            parts.append(ir.concat(ir.literal("-"), node))
    return ir.alt(*parts) if parts else ir.NOTHING


# Negative exponents down to -299: the oracle reads numbers as floats, where 1e-400 is 0.0
# (so not > 0). (A mantissa with 25 leading zeros under e-299 would still underflow.)
_EXPONENT = "([eE](\\+?[0-9]+|-0*([0-9]{1,2}|[12][0-9]{2})))?"
_NONZERO = "([1-9][0-9]*(\\.[0-9]+)?|0\\.[0-9]*[1-9][0-9]*)" + _EXPONENT
_ZERO = "-?0(\\.0+)?" + _EXPONENT


def _by_sign(lo, lo_ex: bool, hi, hi_ex: bool) -> ir.Node:
    """Numbers bounded only by 0 (`minimum: 0`, `exclusiveMinimum: 0`, ...): the sign and
    whether the digits are all zeros decide, so every spelling, exponents included, is fine."""
    parts = []
    if lo is None:
        parts.append("-" + _NONZERO)
    if hi is None:
        parts.append(_NONZERO)
    if not (lo == 0 and lo_ex) and not (hi == 0 and hi_ex):
        parts.append(_ZERO)
    return parse_regex("|".join(f"({p})" for p in parts)) if parts else ir.NOTHING


def _try_parts(make, *args) -> list[ir.Node]:
    try:
        return make(*args)
    except EmptyLanguageError:  # an empty fraction range
        return []


# ---------------------------------------------------------------------------------------------
# The number keywords of a schema
# ---------------------------------------------------------------------------------------------

_NO_EXPONENT = None  # built on first use: every JSON number spelled without an exponent


def _no_exponent_dfa():
    global _NO_EXPONENT
    if _NO_EXPONENT is None:
        _NO_EXPONENT = compile_ir(decimal_ir(None, False, None, False))
    return _NO_EXPONENT


def value_spellings(v) -> ir.Node:
    """Every exponent-free spelling of the number v (1, 1.0, 1.00...; -0 for 0)."""
    if float(v).is_integer() and abs(v) < 2**63:
        return integer_ir(int(v), False, int(v), False)
    from decimal import Decimal

    text = format(Decimal(repr(float(v))), "f")
    return ir.concat(ir.literal(text), ir.repeat(ir.literal("0"), 0, None))


MAX_DECIMAL_STATES = 60_000


def decimal_divisor(k) -> "tuple[int, int] | None":
    """(m, d) with k == m / 10^d exactly, if k is a positive decimal whose automaton is small."""
    from decimal import Decimal

    if not isinstance(k, (int, float)) or isinstance(k, bool) or not k > 0 or not math.isfinite(k):
        return None
    sign, digits, exponent = Decimal(repr(float(k))).normalize().as_tuple()
    if not isinstance(exponent, int) or exponent >= 0:
        return None
    m, d = int("".join(map(str, digits))), -exponent
    return (m, d) if m * (d + 2) <= MAX_DECIMAL_STATES else None


def _finite(x) -> bool:
    return x is None or (isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x))


def integral_divisor(k) -> bool:
    return isinstance(k, (int, float)) and not isinstance(k, bool) and float(k).is_integer() and 0 < k <= 10_000


def number_node(tr, schema: dict, pointer: str, integer: bool) -> ir.Node:
    """JSON numbers (integers if `integer`) valid under the number keywords of `schema`."""
    lo, lo_ex, hi, hi_ex = integer_bounds(schema, integer)
    k = schema.get("multipleOf")
    decimal_k = None
    if k is not None and not integral_divisor(k):
        decimal_k = decimal_divisor(k)
        if decimal_k is None:
            tr.unsupported(
                "multipleOf", f"{pointer}/multipleOf",
                f"only integer divisors up to 10000 and decimals m/10^d with m*(d+2) up to {MAX_DECIMAL_STATES}",
            )
        k = None
    if integer:
        node: ir.Node = integer_ir(lo, lo_ex, hi, hi_ex, tr.opts.integer_zero_fraction)
    elif lo is None and hi is None:
        node = NUMBER
    elif lo in (None, 0) and hi in (None, 0):
        node = _by_sign(lo, lo_ex, hi, hi_ex)
    elif _finite(lo) and _finite(hi):
        node = decimal_ir(lo, lo_ex, hi, hi_ex)
    else:
        tr.unsupported("minimum", pointer, "bounds must be finite numbers")
        node = NUMBER
    excluded = [v for v in schema.get(NOT_ENUM, []) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    not_multiples = [int(m) for m in schema.get(NOT_MULTIPLE_OF, []) if integral_divisor(m)]
    non_integer = bool(schema.get(NON_INTEGER)) and not integer
    if k is None and decimal_k is None and not excluded and not not_multiples and not non_integer:
        return node
    try:
        dfa = compile_ir(node)
        if k is not None:
            dfa = intersect(dfa, multiple_of(int(k)))
        if decimal_k is not None:
            dfa = intersect(dfa, decimal_multiple_of(*decimal_k))
        if non_integer:
            dfa = intersect(dfa, _non_integral())
        if not_multiples:
            dfa = _no_multiple_of(dfa, not_multiples)
        if excluded:
            dfa = intersect(dfa, _no_exponent_dfa())  # exact value tests need exponent-free text
            dfa = difference(dfa, compile_ir(ir.alt(*(value_spellings(v) for v in excluded))))
    except EmptyLanguageError:
        return ir.NOTHING
    return ir.Embedded(dfa)


def _no_multiple_of(dfa, divisors: list[int]):
    """The numbers of `dfa` that are a multiple of none of `divisors`: its non-integers (a
    multiple of no integer) and its integers that fail each divisibility automaton."""
    parts = []
    for take in (_non_integral_part, _integer_part):
        try:
            parts.append(ir.Embedded(take(dfa, divisors)))
        except EmptyLanguageError:
            pass
    return compile_ir(ir.alt(*parts))  # EmptyLanguageError when both are empty


def _non_integral_part(dfa, divisors):
    return intersect(dfa, _non_integral())


def _integer_part(dfa, divisors):
    out = intersect(dfa, compile_ir(integer_ir(None, False, None, False)))
    for m in divisors:
        out = difference(out, multiple_of(m))
    return out


_NON_INTEGRAL = None


def _non_integral():
    """Numbers with a non-zero fraction and no exponent: surely not integers (narrower than
    all non-integers, never wider)."""
    global _NON_INTEGRAL
    if _NON_INTEGRAL is None:
        _NON_INTEGRAL = compile_ir(parse_regex(r"-?(0|[1-9][0-9]*)\.[0-9]*[1-9][0-9]*"))
    return _NON_INTEGRAL
