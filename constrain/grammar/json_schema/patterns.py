"""`pattern`: ECMA-262 regexes that search the string unless anchored.

The regex front end gives the language over characters (automata.regex_language with
`search`): `^`/`$` anchor the match, each top-level alternative on its own, and lookarounds,
`\\b`/`\\B` and anchors inside the pattern are exact (zero-width assertions, see
automata/assertions.py), given as a graph over characters. Callers say how a language over
characters becomes bytes (`wrap`: JSON encoding, quotes) and get a DFA.
"""

from __future__ import annotations

from typing import Callable

from ...automata import DFA, compile_ir, ir, regex_language
from ...errors import RegexSyntaxError, SchemaError, UnsupportedSchemaError

Wrap = Callable[[ir.Node], ir.Node]


def search_pattern(pattern: str, pointer: str) -> ir.Node:
    """ECMA-262 `pattern` semantics over characters: the strings with a match somewhere in
    them. EmptyLanguageError if there are none."""
    if not isinstance(pattern, str):
        raise SchemaError("pattern must be a string", pointer)
    try:
        return regex_language(pattern, search=True)
    except RegexSyntaxError as exc:
        raise UnsupportedSchemaError("pattern", pointer, str(exc)) from None


def pattern_dfa(pattern: str, pointer: str, wrap: Wrap = lambda n: n) -> DFA:
    """The DFA of wrap(strings `pattern` matches). EmptyLanguageError if it matches none."""
    return compile_ir(wrap(search_pattern(pattern, pointer)))
