"""`patternProperties`: which patterns a key matches, and the key languages per pattern."""

from __future__ import annotations

from ...automata import compile_ir, ir
from ...automata.algebra import difference, intersect
from ...errors import EmptyLanguageError, UnsupportedSchemaError
from . import containers, lexical
from .keywords import escape_key
from .patterns import search_pattern


class KeyPatterns:
    """`patternProperties` as key automata: which patterns a named key matches, and the
    languages of other keys per pattern (patterns must not overlap) and outside all of them."""

    def __init__(self, patterns: dict, pointer: str) -> None:
        self.patterns = list(patterns)
        self.decoded = [compile_ir(search_pattern(p, f"{pointer}/{escape_key(p)}")) for p in self.patterns]
        self.encoded = [compile_ir(lexical.quoted(lexical.encode(search_pattern(p, pointer)))) for p in self.patterns]
        for i in range(len(self.encoded)):
            for j in range(i):
                try:
                    intersect(self.encoded[i], self.encoded[j])
                except EmptyLanguageError:
                    continue
                raise UnsupportedSchemaError("patternProperties", pointer, "overlapping patterns")

    def matching(self, key: str) -> list[str]:
        data = key.encode("utf-8")
        out = []
        for p, dfa in zip(self.patterns, self.decoded):
            q = dfa.walk(0, data)
            if q >= 0 and dfa.is_accepting(q):
                out.append(p)
        return out

    def regions(self, named: list[str]) -> list[tuple[ir.Node, str]]:
        other = containers.other_keys(named).dfa
        out = []
        for p, dfa in zip(self.patterns, self.encoded):
            try:
                out.append((ir.Embedded(intersect(other, dfa)), p))
            except EmptyLanguageError:
                continue
        return out

    def rest(self, named: list[str]) -> ir.Node:
        node = containers.other_keys(named)
        dfa = node.dfa
        for pattern_dfa in self.encoded:
            try:
                dfa = difference(dfa, pattern_dfa)
            except EmptyLanguageError:
                return ir.NOTHING
        return ir.Embedded(dfa) if self.encoded else node
