"""`%json {...}` inside a Lark rule: the schema's own rules, under names no Lark rule can have.

The JSON Schema front end (grammar/json_schema) translates the schema as Compiler.
compile_json_schema would (compact whitespace, schema property order, strict); its rules are
renamed `%json<k>:<name>` (Lark names hold no `%` or `:`) and the rule using `%json` calls the
schema's start rule. What needs more than rules (uniqueItems, property_order="any": the
matcher keeps those) is refused by name.
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

    translator = Translator(schema, JsonSchemaOptions("compact", "schema", "schema", True))
    rules, start = translator.translate()
    if translator.keyed or translator.distinct:
        raise UnsupportedGrammarError(
            "%json with uniqueItems", f"%json schema {k}", "its items must differ, which only a JSON Schema compile keeps"
        )
    prefix = f"%json{k}:"
    return {prefix + name: renamed(node, prefix) for name, node in rules.items()}, prefix + start


def renamed(node: ir.Node, prefix: str) -> ir.Node:
    """`node` with every call's rule name prefixed."""
    return replaced_calls(node, lambda call: ir.RuleRef(prefix + call.name))
