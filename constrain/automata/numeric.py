"""Exact digit automata for integer ranges: JSON integers between (optional) bounds, as IR.

JSON Schema's `minimum`/`maximum` on integers are enforced by the grammar itself, digit by
digit (no leading zeros; "-0" is 0), so no output ever leaves the range, and every integer in it
can be produced. Bounds may be open on either side.
"""

from __future__ import annotations

from typing import Optional

from . import ir

_DIGIT = ir.Chars(((0x30, 0x39),))
_NONZERO = ir.Chars(((0x31, 0x39),))


def _digit_range(a: str, b: str) -> ir.Node:
    return ir.Chars(((ord(a), ord(b)),))


def _same_length(lo: str, hi: str) -> ir.Node:
    """Digit strings of len(lo) == len(hi) between lo and hi inclusive (leading zeros allowed)."""
    if not lo:
        return ir.EMPTY
    if lo.count("0") == len(lo) and hi.count("9") == len(hi):  # every string of this length
        return ir.repeat(_DIGIT, len(lo), len(lo))  # (else two branches per digit: 2^len nodes)
    if lo[0] == hi[0]:
        return ir.concat(ir.literal(lo[0]), _same_length(lo[1:], hi[1:]))
    rest = len(lo) - 1
    parts = [ir.concat(ir.literal(lo[0]), _same_length(lo[1:], "9" * rest))]
    if ord(hi[0]) - ord(lo[0]) > 1:
        parts.append(
            ir.concat(_digit_range(chr(ord(lo[0]) + 1), chr(ord(hi[0]) - 1)), ir.repeat(_DIGIT, rest, rest))
        )
    parts.append(ir.concat(ir.literal(hi[0]), _same_length("0" * rest, hi[1:])))
    return ir.alt(*parts)


def natural_range(lo: int, hi: Optional[int]) -> ir.Node:
    """Canonical decimal strings (no leading zeros) of the integers lo..hi, lo >= 0."""
    parts: list[ir.Node] = []
    length = len(str(lo))
    while True:
        start = 0 if length == 1 else 10 ** (length - 1)
        end = 10**length - 1
        a = max(lo, start)
        b = end if hi is None else min(hi, end)
        if a <= b:
            parts.append(_same_length(str(a), str(b)))
        if hi is not None and end >= hi:
            break
        if hi is None and a <= start:
            # From here on every length is complete: [1-9][0-9]{length-1,} (and "0" if length 1).
            parts.pop()
            parts.append(ir.concat(_NONZERO, ir.repeat(_DIGIT, max(length - 1, 0), None)))
            if length == 1:
                parts.append(ir.literal("0"))
            break
        length += 1
    return ir.alt(*parts) if parts else ir.NOTHING


def integer_range(lo: Optional[int], hi: Optional[int]) -> ir.Node:
    """JSON integers x with lo <= x <= hi (None = unbounded). Empty range: ValueError."""
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"empty integer range [{lo}, {hi}]")
    parts: list[ir.Node] = []
    if hi is None or hi >= 0:
        parts.append(natural_range(max(lo, 0) if lo is not None else 0, hi))
    if lo is None or lo < 0:
        # Negative numbers: "-" followed by the magnitudes -hi..-lo (at least 1).
        mag_lo = max(1, -hi) if hi is not None else 1
        mag_hi = None if lo is None else -lo
        parts.append(ir.concat(ir.literal("-"), natural_range(mag_lo, mag_hi)))
    if (lo is None or lo <= 0) and (hi is None or hi >= 0):
        parts.append(ir.literal("-0"))
    return ir.alt(*parts)


def _number_classes():
    """Byte classes of the divisibility automata: 0 other, 1 "-", 2..11 the digits, 12 "."."""
    import numpy as np

    classes = np.zeros(256, dtype=np.int32)
    classes[ord("-")] = 1
    for digit in range(10):
        classes[ord("0") + digit] = 2 + digit
    classes[ord(".")] = 12
    return classes


def multiple_of(k: int):
    """DFA of the JSON integers divisible by k (k >= 1), decimal remainders as states; an
    all-zero fraction (`14.0`) is allowed, as JSON Schema counts 14.0 as an integer."""
    import numpy as np

    from .dfa import minimize

    if k < 1:
        raise ValueError("multipleOf needs a positive integer")
    # States: 0 start, 1 after "-", 2 "0", 3 "-0", 4 after ".", 5 zeros after ".",
    # 6.. 6+k-1 remainder r of a number without leading zero.
    n = 6 + k
    classes = _number_classes()
    table = np.full((n, 13), -1, dtype=np.int32)
    table[0, 1] = 1
    table[0, 2] = 2
    table[1, 2] = 3
    for d in range(1, 10):
        table[0, 2 + d] = 6 + d % k
        table[1, 2 + d] = 6 + d % k
    for r in range(k):
        for d in range(10):
            table[6 + r, 2 + d] = 6 + (r * 10 + d) % k
    for whole in (2, 3, 6):  # a multiple so far: may end with ".0..."
        table[whole, 12] = 4
    table[4, 2] = 5
    table[5, 2] = 5
    accepting = np.zeros(n, dtype=np.bool_)
    accepting[[2, 3, 5, 6]] = True
    return minimize(classes, table, accepting)


def decimal_multiple_of(m: int, d: int):
    """DFA of the JSON numbers without exponent that are multiples of m / 10^d (m, d >= 1):
    shifting the point d places must give an integer (no non-zero digit after the d-th
    fraction digit) divisible by m. States track that remainder (integer part, then each of
    the first d fraction digits), so a bound on m * d keeps them few."""
    import numpy as np

    from .dfa import minimize

    if m < 1 or d < 1:
        raise ValueError("decimal_multiple_of needs m >= 1 and d >= 1")
    START, MINUS, ZERO, TAIL = 0, 1, 2, 3
    INT = 4  # INT + r: integer part with remainder r (no leading zero)
    DOT = INT + m  # DOT + r: after "." with remainder r
    FRAC = DOT + m  # FRAC + (j - 1) * m + r: j fraction digits read, remainder r
    n = FRAC + d * m
    classes = _number_classes()
    table = np.full((n, 13), -1, dtype=np.int32)
    accepting = np.zeros(n, dtype=np.bool_)
    table[START, 1] = MINUS
    for s in (START, MINUS):
        table[s, 2] = ZERO
        for digit in range(1, 10):
            table[s, 2 + digit] = INT + digit % m
    accepting[ZERO] = True
    table[ZERO, 12] = DOT + 0
    for r in range(m):
        for digit in range(10):
            table[INT + r, 2 + digit] = INT + (r * 10 + digit) % m
        table[INT + r, 12] = DOT + r
        accepting[INT + r] = (r * 10**d) % m == 0
        for digit in range(10):
            table[DOT + r, 2 + digit] = FRAC + (r * 10 + digit) % m
        for j in range(1, d + 1):
            s = FRAC + (j - 1) * m + r
            accepting[s] = (r * 10 ** (d - j)) % m == 0
            if j < d:
                for digit in range(10):
                    table[s, 2 + digit] = FRAC + j * m + (r * 10 + digit) % m
            elif r == 0:
                table[s, 2] = TAIL
    accepting[TAIL] = True
    table[TAIL, 2] = TAIL
    return minimize(classes, table, accepting)
