"""UTF-8 range splitting: a code point is in the set iff its encoding matches a byte sequence."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.automata.charset import complement, contains, lead_bytes, normalize, utf8_sequences

scalar = st.integers(0, 0x10FFFF).filter(lambda c: not 0xD800 <= c <= 0xDFFF)
ranges = st.lists(st.tuples(scalar, scalar).map(lambda t: (min(t), max(t))), min_size=1, max_size=4)


def _matches(seqs, data: bytes) -> bool:
    return any(len(s) == len(data) and all(lo <= b <= hi for b, (lo, hi) in zip(data, s)) for s in seqs)


@settings(max_examples=200, deadline=None)
@given(ranges, st.lists(scalar, min_size=1, max_size=30))
def test_utf8_sequences_match_exactly_the_set(rs, probes):
    norm = normalize(rs)
    seqs = utf8_sequences(norm)
    edges = [c for lo, hi in norm for c in (lo, hi, lo - 1, hi + 1) if 0 <= c <= 0x10FFFF]
    for cp in probes + edges:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        assert _matches(seqs, chr(cp).encode("utf-8")) == contains(norm, cp), hex(cp)


def test_sequences_never_match_invalid_utf8():
    seqs = utf8_sequences(((0, 0x10FFFF),))
    for bad in (b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xff"):
        assert not _matches(seqs, bad)


@given(ranges)
def test_complement_partitions_the_scalars(rs):
    norm = normalize(rs)
    comp = complement(norm)
    for cp in (0, 0x7F, 0x80, 0xFFFF, 0x10000, 0x10FFFF) + tuple(c for r in norm for c in r):
        assert contains(norm, cp) != contains(comp, cp)


@settings(max_examples=200, deadline=None)
@given(ranges)
def test_lead_bytes_are_the_first_bytes_of_the_sequences(rs):
    norm = normalize(rs)
    expected = {b for seq in utf8_sequences(norm) for b in range(seq[0][0], seq[0][1] + 1)}
    assert lead_bytes(norm) == expected
    # (a brute-force check at the range edges, independent of the splitting)
    for lo, hi in norm:
        for cp in (lo, hi):
            assert chr(cp).encode("utf-8")[0] in lead_bytes(norm)
