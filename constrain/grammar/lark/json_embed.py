"""`%json {...}` inside a Lark rule: the schema's own rules, under names no Lark rule can have.

The JSON Schema front end (grammar/json_schema) translates the schema as Compiler.
compile_json_schema would (schema property order, strict) with whitespace as llguidance's %json
has it: flexible between tokens unless the schema's `"x-guidance": {"whitespace_flexible":
false}` says compact (our flexible runs are bounded: json_schema/lexical.py). Its rules are
renamed `%json<k>:<name>` (Lark names hold no `%` or `:`) and the rule using `%json` calls the
schema's start rule. What needs more than rules (uniqueItems, property_order="any": the
matcher keeps those) and other x-guidance options are refused by name.
"""

from __future__ import annotations

from typing import Any

from ...automata import ir
from ...automata.rule_facts import replaced_calls
from ...errors import UnsupportedGrammarError


def schema_rules(schema: Any, k: int) -> tuple[dict[str, ir.Node], str]:
    """(the schema's rules, renamed; the name of its start rule)."""
    from ..json_schema.options import JsonSchemaOptions
    from ..json_schema.translate import Translator

    where = f"%json schema {k}"
    flexible = True
    if isinstance(schema, dict) and "x-guidance" in schema:
        schema = dict(schema)
        options = schema.pop("x-guidance")
        for key, value in (options.items() if isinstance(options, dict) else [("x-guidance", options)]):
            if key != "whitespace_flexible" or not isinstance(value, bool):
                raise UnsupportedGrammarError(f"x-guidance option {key!r}", where,
                                              "only whitespace_flexible (true or false) is read")
            flexible = value
    translator = Translator(schema, JsonSchemaOptions("flexible" if flexible else "compact", "schema", "schema", True))
    rules, start = translator.translate()
    if translator.keyed or translator.distinct:
        raise UnsupportedGrammarError("%json with uniqueItems", where,
                                      "its items must differ, which only a JSON Schema compile keeps")
    prefix = f"%json{k}:"
    return {prefix + name: renamed(node, prefix) for name, node in rules.items()}, prefix + start


def renamed(node: ir.Node, prefix: str) -> ir.Node:
    """`node` with every call's rule name prefixed."""
    return replaced_calls(node, lambda call: ir.RuleRef(prefix + call.name))
