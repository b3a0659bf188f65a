"""`patternProperties`: which patterns a key matches, and the key languages per set of patterns.

Patterns may overlap: a key must then satisfy the schema of every pattern it matches. The keys
not named in `properties` are split into regions by the exact set of patterns they match (a
partition refined one pattern at a time; empty regions vanish), each region with its own value
rule, plus the rest that matches no pattern (where additionalProperties applies).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from ...automata import DFA, ir
from ...automata.algebra import difference, intersect
from ...errors import EmptyLanguageError, UnsupportedSchemaError
from . import containers, lexical
from .keywords import escape_key
from .patterns import pattern_dfa

MAX_REGIONS = 64


class KeyPatterns:
    def __init__(self, patterns: dict, pointer: str) -> None:
        self.pointer = pointer
        self.patterns = list(patterns)
        self.decoded = [pattern_dfa(p, f"{pointer}/{escape_key(p)}") for p in self.patterns]
        self.encoded = [pattern_dfa(p, f"{pointer}/{escape_key(p)}", quoted_spellings) for p in self.patterns]

    def matching(self, key: str) -> list[str]:
        data = key.encode("utf-8", "surrogatepass")
        return [p for p, dfa in zip(self.patterns, self.decoded) if dfa.accepts(data)]

    def regions(self, named: list[str]) -> list[tuple[ir.Node, list[str]]]:
        """(keys, the patterns they match) for the other keys that match at least one pattern."""
        if not self.encoded:
            return []
        parts = _regions(tuple(self.patterns), _key_set(named))
        if parts is None:
            raise UnsupportedSchemaError(
                "patternProperties", self.pointer, f"patterns overlap in more than {MAX_REGIONS} ways"
            )
        return [(node, [self.patterns[i] for i in m]) for node, m in parts]

    def rest(self, named: list[str]) -> ir.Node:
        """The other keys that match no pattern."""
        if not self.encoded:
            return containers.other_keys(named)  # (its DFA may wait: see containers.other_keys)
        return _rest(tuple(self.patterns), _key_set(named))


# Regions and rests are remembered per (patterns, named keys): an object schema is translated
# again for every merge it takes part in (allOf members, anyOf branches). They are worked out
# over all strings once per set of patterns; a region then only needs the named keys taken out
# (a product with the other-keys automaton) when one of them lies in it, which is rare. The
# patterns' DFAs are pattern_dfa's (remembered too); KeyPatterns built them first, so the
# errors with pointers were raised there.


def _key_set(named: list[str]) -> tuple[str, ...]:
    return tuple(sorted(set(named)))  # (other_keys depends on the set only)


@lru_cache(maxsize=256)
def _regions(patterns: tuple[str, ...], named: tuple[str, ...]) -> Optional[tuple[tuple[ir.Node, tuple[int, ...]], ...]]:
    """KeyPatterns.regions as (keys, indices of the patterns they match); None: over MAX_REGIONS."""
    whole = _all_strings(patterns)
    if whole is None:  # (over all strings, not necessarily without the named keys)
        parts = _partition(containers.other_keys(named).dfa, patterns)
        return None if parts is None else tuple((ir.Embedded(d), m) for d, m in parts if m)
    taken = _named_regions(patterns, named)
    out = []
    for node, m in whole:
        if not m:
            continue
        if taken is not None and m not in taken:
            out.append((node, m))  # no named key in it: every key of the region is another key
            continue
        piece = _try(intersect, containers.other_keys(named).dfa, node.dfa)  # type: ignore[attr-defined]
        if piece is not None:
            out.append((ir.Embedded(piece), m))
    return tuple(out)


@lru_cache(maxsize=256)
def _rest(patterns: tuple[str, ...], named: tuple[str, ...]) -> ir.Node:
    whole = _all_strings(patterns)
    if whole is None:
        dfa = containers.other_keys(named).dfa
        for p in patterns:
            try:
                dfa = difference(dfa, pattern_dfa(p, "#", quoted_spellings))
            except EmptyLanguageError:
                return ir.NOTHING
        return ir.Embedded(dfa)
    node = next((n for n, m in whole if not m), None)
    if node is None:
        return ir.NOTHING  # every string matches a pattern
    taken = _named_regions(patterns, named)
    if taken is not None and () not in taken:
        return node
    piece = _try(intersect, containers.other_keys(named).dfa, node.dfa)  # type: ignore[attr-defined]
    return ir.NOTHING if piece is None else ir.Embedded(piece)


@lru_cache(maxsize=64)
def _all_strings(patterns: tuple[str, ...]) -> Optional[tuple[tuple[ir.Node, tuple[int, ...]], ...]]:
    """Every quoted string by the set of patterns it matches (the region matching none too);
    None: over MAX_REGIONS."""
    parts = _partition(containers.other_keys(()).dfa, patterns)
    return None if parts is None else tuple((ir.Embedded(d), m) for d, m in parts)


def _partition(start: DFA, patterns: tuple[str, ...]) -> Optional[list[tuple[DFA, tuple[int, ...]]]]:
    """`start` refined one pattern at a time (matching first), empty parts dropped; None when
    a step makes more than MAX_REGIONS parts."""
    parts: list[tuple[DFA, tuple[int, ...]]] = [(start, ())]
    for i, p in enumerate(patterns):
        dfa = pattern_dfa(p, "#", quoted_spellings)
        refined = []
        for region, matched in parts:
            for piece, now in ((_try(intersect, region, dfa), matched + (i,)), (_try(difference, region, dfa), matched)):
                if piece is not None:
                    refined.append((piece, now))
        if len(refined) > MAX_REGIONS:
            return None
        parts = refined
    return parts


def _named_regions(patterns: tuple[str, ...], named: tuple[str, ...]) -> Optional[set[tuple[int, ...]]]:
    """The regions (sets of patterns matched) the named keys lie in; None when a key holds a
    surrogate code point (its spellings are not judged by the decoded patterns: unknown)."""
    decoded = [pattern_dfa(p, "#") for p in patterns]
    out = set()
    for key in named:
        if any(0xD800 <= ord(c) <= 0xDFFF for c in key):
            return None
        data = key.encode("utf-8")
        out.add(tuple(i for i, dfa in enumerate(decoded) if dfa.accepts(data)))
    return out


def quoted_spellings(node: ir.Node) -> ir.Node:
    """Every JSON spelling of the strings of `node`, with the quotes (keys, as written)."""
    return lexical.quoted(lexical.encode(node))


def _try(op, a: DFA, b: DFA):
    try:
        return op(a, b)
    except EmptyLanguageError:
        return None
