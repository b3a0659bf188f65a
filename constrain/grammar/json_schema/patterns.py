"""`pattern`: ECMA-262 regexes that search the string unless anchored."""

from __future__ import annotations

from ...automata import ir, parse_regex
from ...errors import ConstrainError, SchemaError, UnsupportedSchemaError
from . import lexical


def search_pattern(pattern: str, pointer: str) -> ir.Node:
    """ECMA-262 `pattern` semantics: a search, unless anchored with ^ / $."""
    if not isinstance(pattern, str):
        raise SchemaError("pattern must be a string", pointer)
    try:
        node = parse_regex(pattern)
    except ConstrainError as exc:
        raise UnsupportedSchemaError("pattern", pointer, str(exc)) from None
    if _top_level_alternation(pattern) and ("^" in pattern or "$" in pattern):
        raise UnsupportedSchemaError("pattern", pointer, "anchors inside a top-level alternation")
    anything = ir.repeat(ir.Chars(lexical.ANY_CHAR), 0, None)
    start = ir.EMPTY if pattern.startswith("^") else anything
    end = ir.EMPTY if pattern.endswith("$") and not pattern.endswith("\\$") else anything
    return ir.concat(start, node, end)


def _top_level_alternation(pattern: str) -> bool:
    depth, i, in_class = 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            return True
        i += 1
    return False
