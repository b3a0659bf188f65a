"""`pattern`: ECMA-262 regexes that search the string unless anchored.

The regex front end gives the language over characters (automata.regex_language with
`search`): `^`/`$` anchor the match, each top-level alternative on its own, and lookarounds,
`\\b`/`\\B` and anchors inside the pattern are exact (zero-width assertions, see
automata/assertions.py), given as a graph over characters. Callers say how a language over
characters becomes bytes (`wrap`: JSON encoding, quotes) and get a DFA.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

from ...automata import DFA, compile_ir, ir, regex_language
from ...errors import RegexSyntaxError, SchemaError, UnsupportedSchemaError

Wrap = Callable[[ir.Node], ir.Node]


def _same(node: ir.Node) -> ir.Node:
    return node


def pattern_dfa(pattern: str, pointer: str, wrap: Wrap = _same) -> DFA:
    """The DFA of wrap(strings with a match of `pattern` somewhere in them). EmptyLanguageError
    if there are none."""
    if not isinstance(pattern, str):
        raise SchemaError("pattern must be a string", pointer)
    try:
        return _pattern_dfa(pattern, wrap)
    except RegexSyntaxError as exc:
        raise UnsupportedSchemaError("pattern", pointer, str(exc)) from None


@lru_cache(maxsize=1024)
def _pattern_dfa(pattern: str, wrap: Wrap) -> DFA:
    """pattern_dfa, remembered per (pattern, wrap): a sub-schema with patternProperties is
    translated again for every merge it takes part in (allOf, anyOf branches), and common
    patterns recur across schemas; each build is an NFA and a subset construction."""
    return compile_ir(wrap(regex_language(pattern, search=True)))
