"""The grammar of every JSON value, as rules (recursion goes through the stack, unbounded).

This is what `{}`, `true` and an absent `additionalProperties` allow, and the reference JSON
grammar for the rule engine's tests.
"""

from __future__ import annotations

from functools import lru_cache

from ...automata import ir
from .lexical import FALSE, NULL, NUMBER, TRUE, any_string, whitespace


def json_value_rules(ws_mode: str = "compact", prefix: str = "json_") -> dict[str, ir.Node]:
    """Rules `<prefix>value`, `<prefix>object`, `<prefix>array`, `<prefix>string`. Values and
    keys read their strings inline, not through `<prefix>string`: a token that leaves a string
    (`":`, `"},`) then crosses one rule boundary fewer, and each crossing is an expansion of the
    stack at mask time (per-token masks on JSONSchemaBench: mean -7%, p99 -6%). The nodes are
    made once per process: most schemas allow any value somewhere, and what the compiler
    learns about a node (its hash, callees, DFA) is then learned once."""
    return dict(_json_value_rules(ws_mode, prefix))


@lru_cache(maxsize=16)
def _json_value_rules(ws_mode: str, prefix: str) -> dict[str, ir.Node]:
    ws = whitespace(ws_mode)
    value, obj, arr = (ir.call(prefix + n) for n in ("value", "object", "array"))
    string = any_string()
    comma = ir.concat(ws, ir.literal(","), ws)
    member = ir.concat(string, ws, ir.literal(":"), ws, value)
    return {
        prefix + "value": ir.alt(obj, arr, string, NUMBER, TRUE, FALSE, NULL),
        prefix + "object": ir.concat(
            ir.literal("{"), ws,
            ir.repeat(ir.concat(member, ir.repeat(ir.concat(comma, member), 0, None)), 0, 1),
            ws, ir.literal("}"),
        ),
        prefix + "array": ir.concat(
            ir.literal("["), ws,
            ir.repeat(ir.concat(value, ir.repeat(ir.concat(comma, value), 0, None)), 0, 1),
            ws, ir.literal("]"),
        ),
        prefix + "string": any_string(),
    }
