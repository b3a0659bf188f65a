"""Fixed-width hexadecimal ranges as IR (either letter case), for `\\uXXXX` escapes of a set
of code points, including UTF-16 surrogate pairs for characters beyond the BMP."""

from __future__ import annotations

from ...automata import ir

_HEX = "0123456789abcdef"


def _digit_set(lo: int, hi: int) -> ir.Chars:
    ranges = []
    for d in range(lo, hi + 1):
        c = _HEX[d]
        ranges.append((ord(c), ord(c)))
        if c.isalpha():
            ranges.append((ord(c.upper()), ord(c.upper())))
    return ir.chars(ranges)


def _hex_width(lo: int, hi: int, width: int) -> ir.Node:
    """Hex strings of exactly `width` digits with value in lo..hi."""
    if width == 0:
        return ir.EMPTY
    unit = 16 ** (width - 1)
    a, b = divmod(lo, unit), divmod(hi, unit)
    if a[0] == b[0]:
        return ir.concat(_digit_set(a[0], a[0]), _hex_width(a[1], b[1], width - 1))
    parts = [ir.concat(_digit_set(a[0], a[0]), _hex_width(a[1], unit - 1, width - 1))]
    if b[0] - a[0] > 1:
        parts.append(ir.concat(_digit_set(a[0] + 1, b[0] - 1), ir.repeat(_digit_set(0, 15), width - 1, width - 1)))
    parts.append(ir.concat(_digit_set(b[0], b[0]), _hex_width(0, b[1], width - 1)))
    return ir.alt(*parts)


def _u(lo: int, hi: int) -> ir.Node:
    return ir.concat(ir.literal("\\u"), _hex_width(lo, hi, 4))


def unicode_escapes(lo: int, hi: int) -> ir.Node:
    """Every `\\uXXXX` spelling (one escape, or a surrogate pair) of the code points lo..hi."""
    parts: list[ir.Node] = []
    bmp_hi = min(hi, 0xFFFF)
    for a, b in ((lo, min(bmp_hi, 0xD7FF)), (max(lo, 0xE000), bmp_hi)):
        if a <= b:
            parts.append(_u(a, b))
    if hi >= 0x10000:
        a, b = max(lo, 0x10000) - 0x10000, hi - 0x10000
        ha, la = divmod(a, 0x400)
        hb, lb = divmod(b, 0x400)
        if ha == hb:
            parts.append(ir.concat(_u(0xD800 + ha, 0xD800 + ha), _u(0xDC00 + la, 0xDC00 + lb)))
        else:
            parts.append(ir.concat(_u(0xD800 + ha, 0xD800 + ha), _u(0xDC00 + la, 0xDFFF)))
            if hb - ha > 1:
                parts.append(ir.concat(_u(0xD800 + ha + 1, 0xD800 + hb - 1), _u(0xDC00, 0xDFFF)))
            parts.append(ir.concat(_u(0xD800 + hb, 0xD800 + hb), _u(0xDC00, 0xDC00 + lb)))
    return ir.alt(*parts) if parts else ir.NOTHING
