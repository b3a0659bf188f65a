"""The grammar of every JSON value, as rules (recursion goes through the stack, unbounded).

This is what `{}`, `true` and an absent `additionalProperties` allow, and the reference JSON
grammar for the rule engine's tests.
"""

from __future__ import annotations

from ...automata import ir
from .lexical import FALSE, NULL, NUMBER, TRUE, any_string, whitespace


def json_value_rules(ws_mode: str = "compact", prefix: str = "json_") -> dict[str, ir.Node]:
    """Rules `<prefix>value`, `<prefix>object`, `<prefix>array`, `<prefix>string`."""
    ws = whitespace(ws_mode)
    value, obj, arr, string = (ir.call(prefix + n) for n in ("value", "object", "array", "string"))
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
