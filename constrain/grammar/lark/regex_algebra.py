"""llguidance's `&` (and) and `~` (not) in a terminal's definition, as one DFA.

No regex text says "a line without two newlines in a row" (`/[a-z\\n]*/ & ~/(?s:.*)\\n\\n(?s:.*)/`),
so a terminal that uses them is kept as a tree of Lark patterns (`Algebra`) and built by DFA
products (automata/algebra.py): `&` intersects, `~` takes every byte string the part does not
match (invalid UTF-8 too, as in llguidance), and sequences, alternatives and repeats around
them are embedded DFAs. Such a terminal's regexes are read within its own text: an assertion
in them does not see the text after the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from ...automata import compile_ir, ir
from ...automata.algebra import difference, intersect
from ...automata.dfa import DFA
from ...limits import Limits

ANY_TEXT = DFA(np.zeros(256, dtype=np.int32), np.zeros((1, 1), dtype=np.int32), np.ones(1, dtype=np.bool_))


@dataclass(frozen=True)
class Algebra:
    """`op` ("and", "not", "seq", "alt", "rep") over `parts` (Lark patterns or Algebras);
    `lo`..`hi` for "rep" (hi None: no bound). Not a regex: `to_regexp` has none to give."""

    op: str
    parts: tuple
    lo: int = 0
    hi: Optional[int] = None


def dfa_of(pattern: Any, regex_dfa: Callable[[str], DFA], limits: Limits) -> DFA:
    """The DFA of a pattern tree; `regex_dfa` builds a leaf's from its regex text."""
    if not isinstance(pattern, Algebra):
        return regex_dfa(pattern.to_regexp())
    dfas = [dfa_of(p, regex_dfa, limits) for p in pattern.parts]
    if pattern.op == "and":
        out = dfas[0]
        for d in dfas[1:]:
            out = intersect(out, d, limits)
        return out
    if pattern.op == "not":
        return difference(ANY_TEXT, dfas[0], limits)
    nodes = [ir.Embedded(d) for d in dfas]
    if pattern.op == "seq":
        return compile_ir(ir.concat(*nodes), limits)
    if pattern.op == "alt":
        return compile_ir(ir.alt(*nodes), limits)
    return compile_ir(ir.repeat(nodes[0], pattern.lo, pattern.hi), limits)
