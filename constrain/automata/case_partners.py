"""The characters Python's `re` matches for one character under the `i` flag.

`re` (Lark's matcher) compares characters by their simple lower case (`_sre.unicode_tolower`),
with a few extra equivalences it lists itself (`re._casefix`: i and dotless ı, s and long ſ, µ and
μ, the Greek final sigma...). So `(?i)k` matches the Kelvin sign K, `(?i)[^i]` does not match ı,
and `(?i)s` matches ſ. Taking each character's own upper, lower and case-folded forms instead (as
before 2026-12-07) missed those: `[^i]` let ı through where Lark refuses it.
The characters whose lower case is x are x's upper and title case forms, and for six letters a
compatibility character besides (IRREGULAR); tests/automata/test_case_partners.py checks that
against every code point of the running Python's Unicode tables.
"""

from __future__ import annotations

from functools import lru_cache

try:
    from _sre import unicode_tolower as _lower  # (what re itself compares by)
except ImportError:  # pragma: no cover - not CPython
    def _lower(cp: int) -> int:
        low = chr(cp).lower()
        return ord(low) if len(low) == 1 else cp

try:
    from re._casefix import _EXTRA_CASES as _EXTRA  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python < 3.11
    from sre_compile import _ignorecase_fixes as _EXTRA  # type: ignore[no-redef]

# lower-case code point -> the characters besides its upper and title case forms whose lower
# case it is (Kelvin sign, dotted capital I, Angstrom sign, Greek capital theta symbol, Ohm sign,
# capital sharp s)
IRREGULAR: dict[int, tuple[int, ...]] = {
    0x69: (0x130,), 0x6B: (0x212A,), 0xE5: (0x212B,), 0x3B8: (0x3F4,), 0x3C9: (0x2126,), 0xDF: (0x1E9E,),
}


@lru_cache(maxsize=8192)
def partners(cp: int) -> tuple[int, ...]:
    """Every code point that `(?i)` + the character cp matches in `re`, cp included."""
    x = _lower(cp)
    out = {cp}
    for low in (x, *_EXTRA.get(x, ())):
        out.update(d for d in _with_lower(low) if _lower(d) == low)
    return tuple(sorted(out))


def _with_lower(x: int) -> list[int]:
    """Candidates for the characters whose lower case is x."""
    ch = chr(x)
    found = [x, *IRREGULAR.get(x, ())]
    for form in (ch.upper(), ch.title()):
        if len(form) == 1:
            found.append(ord(form))
    return found
