"""JSON values as IR: what `const` and `enum` allow."""

from __future__ import annotations

import json
from typing import Any

from ...automata import ir
from ...errors import SchemaError
from . import lexical
from .numbers import integer_ir


def json_literal(value: Any) -> ir.Node:
    """The compact JSON of `value` (strings in every spelling)."""
    if isinstance(value, str):
        return lexical.string_literal(value, canonical=True)
    if isinstance(value, bool) or value is None:
        return ir.literal(json.dumps(value))
    if isinstance(value, (int, float)):
        if float(value).is_integer() and abs(value) < 2**63:
            # 1, 1.0 and 1.00 are the same number to JSON Schema (and 0 is also -0).
            return integer_ir(int(value), False, int(value), False)
        return ir.literal(json.dumps(value))
    if isinstance(value, list):
        items = [json_literal(v) for v in value]
        body = []
        for i, item in enumerate(items):
            body += [ir.literal(",")] if i else []
            body.append(item)
        return ir.concat(ir.literal("["), *body, ir.literal("]"))
    if isinstance(value, dict):
        body = []
        for i, (k, v) in enumerate(value.items()):
            body += [ir.literal(",")] if i else []
            body += [lexical.string_literal(k, canonical=True), ir.literal(":"), json_literal(v)]
        return ir.concat(ir.literal("{"), *body, ir.literal("}"))
    raise SchemaError(f"not a JSON value: {value!r}")


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema sees it: 1 == 1.0, but true != 1; objects by members."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def type_name(v: Any) -> str:
    """The JSON type of a value ("number" for every number)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(v), "object")
def value_key(value: Any) -> Any:
    """A hashable key equal for values JSON Schema calls equal (1 and 1.0; objects whatever
    their key order; but true is not 1): what `uniqueItems` compares."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list):
        return ("a", tuple(value_key(v) for v in value))
    return ("o", frozenset((k, value_key(v)) for k, v in value.items()))


def text_key(text: bytes) -> Any:
    """value_key of a JSON text (an array item the grammar produced)."""
    try:
        return value_key(json.loads(text))
    except ValueError:  # not a whole value: compared as bytes (the grammar never gets here)
        return ("text", bytes(text))


def string_prefix(text: bytes) -> "str | None":
    """The characters a partial JSON string (`"ab\\u00`) has settled so far, or None."""
    for cut in range(min(len(text), 7)):
        try:
            value = json.loads(text[: len(text) - cut] + b'"')
        except ValueError:
            continue
        if not isinstance(value, str):
            return None
        # (a high surrogate may be half of a pair still being written)
        return value[:-1] if value and "\ud800" <= value[-1] <= "\udbff" else value
    return None
