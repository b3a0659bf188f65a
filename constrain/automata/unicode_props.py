"""Unicode general categories as code point ranges, for `\\p{..}` in regexes.

Computed from the running Python's `unicodedata` on first use of each category (a scan of all
code points, ~0.3 s) and cached for the process.
"""

from __future__ import annotations

import functools
import unicodedata

from .charset import MAX_CODE_POINT, Ranges, normalize


@functools.lru_cache(maxsize=64)
def unicode_category(name: str) -> Ranges:
    """Code point ranges of a general category ('L', 'Lu', 'Nd', ...); computed once per name."""
    ranges: list[tuple[int, int]] = []
    start = -1
    for cp in range(MAX_CODE_POINT + 1):
        hit = unicodedata.category(chr(cp)).startswith(name)
        if hit and start < 0:
            start = cp
        elif not hit and start >= 0:
            ranges.append((start, cp - 1))
            start = -1
    if start >= 0:
        ranges.append((start, MAX_CODE_POINT))
    return normalize(ranges)


CATEGORY_ALIASES = {
    "Letter": "L", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Number": "N",
    "Decimal_Number": "Nd", "Punctuation": "P", "Symbol": "S", "Separator": "Z",
    "Mark": "M", "Other": "C",
}
KNOWN_CATEGORIES = {
    "L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No",
    "P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "S", "Sm", "Sc", "Sk", "So",
    "Z", "Zs", "Zl", "Zp", "C", "Cc", "Cf", "Co", "Cn",
}
