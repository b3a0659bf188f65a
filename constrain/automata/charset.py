"""Sets of Unicode code points as sorted, merged ranges, and their UTF-8 byte-range sequences.

Regexes speak in characters; the automaton reads bytes. A character class becomes a small
set of byte-range sequences (the classic UTF-8 range split), so the DFA stays byte-level and a
token holding half of an emoji is judged byte by byte.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Sequence

from .case_partners import partners

MAX_CODE_POINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)

Ranges = tuple[tuple[int, int], ...]


def normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sort, merge overlapping/adjacent ranges, drop surrogates (they are not valid UTF-8)."""
    items = sorted((lo, hi) for lo, hi in ranges if lo <= hi)
    merged: list[list[int]] = []
    for lo, hi in items:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    out: list[tuple[int, int]] = []
    s_lo, s_hi = SURROGATES
    for lo, hi in merged:
        if hi < s_lo or lo > s_hi:
            out.append((lo, hi))
            continue
        if lo < s_lo:
            out.append((lo, s_lo - 1))
        if hi > s_hi:
            out.append((s_hi + 1, hi))
    return tuple(out)


def complement(ranges: Ranges) -> Ranges:
    """All scalar values not in `ranges` (which must be normalized)."""
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return normalize(out)


def union(*sets: Ranges) -> Ranges:
    return normalize(r for s in sets for r in s)


def contains(ranges: Ranges, cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def case_fold(ranges: Ranges) -> Ranges:
    """Add what Python's `re` matches for every code point under the `i` flag (case_partners.py)."""
    return _case_fold(tuple(ranges))


@lru_cache(maxsize=4096)
def _case_fold(ranges: Ranges) -> Ranges:
    """case_fold, remembered: case-insensitive keywords fold the same letters over and over
    (SQL's forty keywords and the NAME regex excluding them: ~1 ms a compile)."""
    extra: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if hi - lo > 0x3000:
            # Huge ranges (negated classes, dot) already hold nearly everything; fold only the
            # cased blocks inside them to keep compile time bounded.
            lo_iter, hi_iter = max(lo, 0), min(hi, 0x1F00 + 0x2FF)
        else:
            lo_iter, hi_iter = lo, hi
        for cp in range(lo_iter, hi_iter + 1):
            extra.extend((o, o) for o in partners(cp) if o != cp)
    return union(ranges, tuple(extra))


_UTF8_BOUNDS = ((0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, MAX_CODE_POINT))


def _encode(cp: int) -> bytes:
    return chr(cp).encode("utf-8", "surrogatepass")


def _split_same_length(lo: int, hi: int, out: list[tuple[tuple[int, int], ...]]) -> None:
    """lo..hi encode to the same number of bytes; split until each piece is a product of ranges."""
    n = len(_encode(lo))
    if n == 1:
        out.append(((lo, hi),))
        return
    for i in range(1, n):
        # Bits held by the last i continuation bytes.
        mask = (1 << (6 * i)) - 1
        if lo & ~mask != hi & ~mask:
            if lo & mask != 0:
                _split_same_length(lo, lo | mask, out)
                _split_same_length((lo | mask) + 1, hi, out)
                return
            if hi & mask != mask:
                _split_same_length(lo, (hi & ~mask) - 1, out)
                _split_same_length(hi & ~mask, hi, out)
                return
    a, b = _encode(lo), _encode(hi)
    out.append(tuple((a[k], b[k]) for k in range(n)))


@lru_cache(maxsize=1024)
def lead_bytes(ranges: Ranges) -> frozenset[int]:
    """The first bytes of the UTF-8 encodings of `ranges` (normalized): a lead byte grows with
    the code point within each encoding length, so each range's are one run per length (a
    Lark grammar asks this of every terminal; keywords share their first letters)."""
    out: set[int] = set()
    for lo, hi in ranges:
        for b_lo, b_hi in _UTF8_BOUNDS:
            s, e = max(lo, b_lo), min(hi, b_hi)
            if s <= e:
                out.update(range(_encode(s)[0], _encode(e)[0] + 1))
    return frozenset(out)


def utf8_sequences(ranges: Sequence[tuple[int, int]]) -> list[tuple[tuple[int, int], ...]]:
    """Byte-range sequences whose union is exactly the UTF-8 encodings of `ranges`."""
    out: list[tuple[tuple[int, int], ...]] = []
    for lo, hi in normalize(ranges):
        for b_lo, b_hi in _UTF8_BOUNDS:
            s, e = max(lo, b_lo), min(hi, b_hi)
            if s > e:
                continue
            for piece_lo, piece_hi in normalize([(s, e)]):
                _split_same_length(piece_lo, piece_hi, out)
    return out
