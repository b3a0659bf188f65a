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
from ...automata.rule_facts import callees
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
    memo: dict[int, ir.Node] = {}

    def go(n: ir.Node) -> ir.Node:
        hit = memo.get(id(n))
        if hit is not None:
            return hit
        if not callees(n):
            out: ir.Node = n
        elif isinstance(n, ir.RuleRef):
            out = ir.RuleRef(prefix + n.name)
        elif isinstance(n, ir.Concat):
            out = ir.Concat(tuple(go(m) for m in n.items))
        elif isinstance(n, ir.Alt):
            out = ir.Alt(tuple(go(m) for m in n.items))
        elif isinstance(n, ir.Repeat):
            out = ir.Repeat(go(n.item), n.min, n.max)
        elif isinstance(n, ir.Graph):
            out = ir.Graph(n.n_states, n.start, n.finals, tuple((a, b, go(m)) for a, b, m in n.edges))
        else:
            raise TypeError(f"cannot rename the calls of {type(n).__name__}")
        memo[id(n)] = out
        return out

    return go(node)
