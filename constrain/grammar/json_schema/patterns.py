"""`pattern`: ECMA-262 regexes that search the string unless anchored.

Beyond what the regex parser takes: top-level alternatives anchor each on its own (`^a|b$`),
and lookaheads right after `^` (`^(?!internal\\.)...`, `^(?=.{1,63}$)...`) become an
intersection or difference with what the lookahead matches as a prefix (or whole, with `$`).
Callers say how a language over characters becomes bytes (`wrap`: JSON encoding, quotes) and
get a DFA: encoding maps distinct strings to disjoint spellings, so it commutes with both.
"""

from __future__ import annotations

from typing import Callable

from ...automata import DFA, compile_ir, ir, parse_regex
from ...automata.algebra import difference, intersect
from ...errors import ConstrainError, EmptyLanguageError, SchemaError, UnsupportedSchemaError
from . import lexical

Wrap = Callable[[ir.Node], ir.Node]


def search_pattern(pattern: str, pointer: str) -> ir.Node:
    """ECMA-262 `pattern` semantics over characters: a search, unless anchored with ^ / $
    (no lookaheads or top-level alternatives with anchors: see pattern_dfa)."""
    if not isinstance(pattern, str):
        raise SchemaError("pattern must be a string", pointer)
    try:
        node = parse_regex(pattern)
    except ConstrainError as exc:
        raise UnsupportedSchemaError("pattern", pointer, str(exc)) from None
    if len(_top_level_parts(pattern)) > 1 and ("^" in pattern or "$" in pattern):
        raise UnsupportedSchemaError("pattern", pointer, "anchors inside a top-level alternation")
    anything = ir.repeat(ir.Chars(lexical.ANY_CHAR), 0, None)
    start = ir.EMPTY if pattern.startswith("^") else anything
    end = ir.EMPTY if pattern.endswith("$") and not pattern.endswith("\\$") else anything
    return ir.concat(start, node, end)


def pattern_dfa(pattern: str, pointer: str, wrap: Wrap = lambda n: n) -> DFA:
    """The DFA of wrap(strings `pattern` matches). EmptyLanguageError if it matches none."""
    if not isinstance(pattern, str):
        raise SchemaError("pattern must be a string", pointer)
    parts = _top_level_parts(pattern)
    if len(parts) > 1 and ("^" in pattern or "$" in pattern):
        dfas = []
        for part in parts:
            try:
                dfas.append(pattern_dfa(part, pointer, wrap))
            except EmptyLanguageError:
                continue
        return compile_ir(ir.alt(*(ir.Embedded(d) for d in dfas)))
    if not pattern.startswith(("^(?=", "^(?!")):
        return compile_ir(wrap(search_pattern(pattern, pointer)))
    body = pattern[1:]
    looks = []
    while body.startswith(("(?=", "(?!")):
        end = _group_end(body)
        if end < 0:
            raise UnsupportedSchemaError("pattern", pointer, "unbalanced lookahead group")
        looks.append((body[2], body[3:end]))
        body = body[end + 1:]
    dfa = compile_ir(wrap(search_pattern("^" + body, pointer)))
    for kind, inner in looks:
        try:
            cond = pattern_dfa("|".join("^" + p for p in _top_level_parts(inner)), pointer, wrap)
        except EmptyLanguageError:
            if kind == "=":
                raise
            continue  # a lookahead that never matches excludes nothing
        dfa = intersect(dfa, cond) if kind == "=" else difference(dfa, cond)
    return dfa


def _structure(text: str):
    """(index, char, group depth after it) of every unescaped char outside character classes."""
    depth, i, in_class = 0, 0, False
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        else:
            depth += (c == "(") - (c == ")")
            yield i, c, depth
        i += 1


def _top_level_parts(pattern: str) -> list[str]:
    """The pattern split at `|` outside groups and classes."""
    cuts = [i for i, c, depth in _structure(pattern) if c == "|" and depth == 0]
    bounds = [-1, *cuts, len(pattern)]
    return [pattern[a + 1:b] for a, b in zip(bounds, bounds[1:])]


def _group_end(text: str) -> int:
    """Index of the `)` closing the group that opens text (-1 if none)."""
    return next((i for i, c, depth in _structure(text) if c == ")" and depth == 0), -1)
