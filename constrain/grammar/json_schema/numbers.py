"""JSON numbers under bounds, exactly: integers via digit automata, decimals with integral
bounds via integer part ranges plus the fraction rule at the bounds (no exponent when bounded)."""

from __future__ import annotations

import math
from typing import Optional

from ...automata import ir
from ...automata.numeric import integer_range, natural_range

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


def integer_ir(lo, lo_ex, hi, hi_ex) -> ir.Node:
    """Integers in the bounds; also the integral floats like 1.0 that JSON Schema counts."""
    a = None if lo is None else (math.floor(lo) + 1 if lo_ex else math.ceil(lo))
    b = None if hi is None else (math.ceil(hi) - 1 if hi_ex else math.floor(hi))
    return ir.concat(integer_range(a, b), ir.repeat(_ZERO_FRACTION, 0, 1))


def is_integral(x) -> bool:
    return x is None or (isinstance(x, (int, float)) and float(x).is_integer())


def _magnitudes(lo: int, lo_strict: bool, hi: Optional[int], hi_strict: bool) -> list[ir.Node]:
    """Unsigned decimals m = I(.F)? with lo <(=) m <(=) hi (hi None: unbounded), lo >= 0."""
    any_fraction = ir.repeat(_FRACTION, 0, 1)
    zero_fraction = ir.repeat(_ZERO_FRACTION, 0, 1)
    parts: list[ir.Node] = []
    if hi is not None and hi < lo:
        return parts
    if hi is None or hi - lo >= 2:  # integer parts strictly between the bounds: any fraction
        parts.append(ir.concat(natural_range(lo + 1, None if hi is None else hi - 1), any_fraction))
    if hi is None or lo < hi:  # I == lo: m > lo needs a non-zero fraction
        parts.append(ir.concat(natural_range(lo, lo), _NONZERO_FRACTION if lo_strict else any_fraction))
        if not hi_strict and hi is not None:  # I == hi: only hi itself
            parts.append(ir.concat(natural_range(hi, hi), zero_fraction))
    elif not lo_strict and not hi_strict:  # lo == hi
        parts.append(ir.concat(natural_range(lo, lo), zero_fraction))
    return parts


def decimal_ir(lo, lo_ex: bool, hi, hi_ex: bool) -> ir.Node:
    """Decimals x with integral bounds (None = open) and no exponent: lo <(=) x <(=) hi."""
    lo = None if lo is None else int(lo)
    hi = None if hi is None else int(hi)
    parts: list[ir.Node] = []
    if hi is None or hi > 0 or (hi == 0 and not hi_ex):  # x >= 0
        low, strict = (0, False) if lo is None or lo < 0 else (lo, lo_ex)
        parts += _magnitudes(low, strict, hi, hi_ex)
    if (lo is None or lo < 0 or (lo == 0 and not lo_ex)) and (hi is None or hi > 0 or (hi == 0 and not hi_ex)):
        parts.append(ir.concat(ir.literal("-0"), ir.repeat(_ZERO_FRACTION, 0, 1)))  # -0 is 0
    if lo is None or lo < 0:  # x < 0: m = -x > 0
        low, strict = (0, True) if hi is None or hi >= 0 else (-hi, hi_ex)
        for node in _magnitudes(low, strict, None if lo is None else -lo, lo_ex):
            parts.append(ir.concat(ir.literal("-"), node))
    return ir.alt(*parts) if parts else ir.NOTHING
