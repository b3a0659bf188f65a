"""Boundaries recorded only where a byte can follow a return (index/follow.py) change no mask:
masks equal those of walks that record every exit, along random walks of several grammars."""

from __future__ import annotations

import random

import numpy as np
import pytest

from constrain import Compiler
from constrain.automata.rules import compile_rules
from constrain.grammar.json_schema.options import JsonSchemaOptions
from constrain.grammar.json_schema.translate import Translator
from constrain.index import follow as follow_module
from constrain.index.follow import ALWAYS, IF_FOLLOWS, ExitFilter
from constrain.index.stack_index import StackTokenAutomaton

from token_choices import short_or_all, token_lengths, without  # tests/support

SCHEMAS = {
    "bounded_strings": {
        "type": "object",
        "properties": {"a": {"type": "string", "maxLength": 40}, "b": {"type": "string", "minLength": 2}},
    },
    "formats": {
        "type": "object",
        "properties": {"mail": {"type": "string", "format": "email"}, "when": {"type": "string", "format": "date-time"}},
    },
    "nested": {
        "type": "array",
        "items": {"type": "object", "properties": {"k": {"type": "array", "items": {"type": ["string", "number"]}}}},
    },
    "recursive": {
        "$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
        "$ref": "#/$defs/node",
    },
    "any_value": {},
}


class _Unfiltered(ExitFilter):
    def kinds(self, rep):
        rule = self.rules.rule(rep)
        return rule.exits.astype(np.uint8), np.zeros((1, 256), dtype=np.bool_)


def _automata(schema, vocab):
    compiler = Compiler(vocab)
    rules, start = Translator(schema, JsonSchemaOptions("compact", "schema", "schema", True), {}).translate()
    rule_set = compile_rules(rules, start, compiler.limits)
    rule_set.build_near_start(10**9)
    fast, plain = StackTokenAutomaton(rule_set, compiler.index), StackTokenAutomaton(rule_set, compiler.index)
    plain.exit_filter = _Unfiltered(rule_set)
    return fast, plain


@pytest.mark.parametrize("every_rule", [False, True])
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_filtered_exits_give_the_same_masks(name, every_rule, llama3, monkeypatch):
    if every_rule:  # filter every rule's returns, not only those of rules with many
        monkeypatch.setattr(follow_module, "MIN_RETURN_STATES", 0)
    fast, plain = _automata(SCHEMAS[name], llama3)
    rng = random.Random(name)
    token_bytes = llama3.token_bytes
    for _ in range(4):
        state = fast.initial_state()
        for _ in range(40):
            row = fast.mask_row(state)
            assert np.array_equal(row, plain.mask_row(state))
            ids = np.flatnonzero(np.unpackbits(row.view(np.uint8), bitorder="little"))
            ids = ids[ids < len(token_bytes)]
            ids = without(ids[token_lengths(llama3)[ids] > 0], llama3.special_ids)  # non-empty, not special
            if not ids.size:
                break
            short = short_or_all(ids, llama3, 2)
            state = fast.advance(state, token_bytes[int(rng.choice(short if rng.random() < 0.7 else ids))])
            assert state is not None


def test_a_property_value_returns_only_before_a_comma_or_brace(llama3, monkeypatch):
    """A bounded string property is a rule whose caller reads `,` or `}` after it: its walks
    record boundaries only there; the start rule's return ends the document (no byte)."""
    monkeypatch.setattr(follow_module, "MIN_RETURN_STATES", 0)
    fast, _ = _automata(SCHEMAS["bounded_strings"], llama3)
    rules = fast.rules
    follows = {}
    for r in range(rules.n_rules):
        if rules.same[r] == r:
            kinds, follow = fast.exit_filter.kinds(r)
            assert set(np.unique(kinds).tolist()) <= {0, ALWAYS, IF_FOLLOWS}
            follows[rules.names[r]] = bytes(np.flatnonzero(follow).astype(np.uint8))
    assert follows[rules.names[rules.start]] == b""
    assert b",}" in follows.values()
