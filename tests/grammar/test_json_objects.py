"""objects.py: what the object translation shares between objects."""

from __future__ import annotations

import json

import jsonschema
import pytest

from constrain import Compiler, Matcher
from constrain.grammar.json_schema.options import JsonSchemaOptions
from constrain.grammar.json_schema.translate import Translator


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_alternative_objects_share_their_other_keys_member(compiler):
    """The branches of an anyOf over objects with the same keys each allow other keys, the same
    member: one rule, so the automaton merges the calls and a key position holds as many stacks
    with six branches as with two (each stack is walked at every mask)."""

    def schema(n):
        return {"type": "object", "properties": {"kind": {"type": "string"}}, "anyOf": [
            {"properties": {"kind": {"const": f"k{i}"}, "v": {"type": "integer"}}} for i in range(n)]}

    stacks, helpers = [], []
    for n in (2, 6):
        translator = Translator(schema(n), JsonSchemaOptions("compact", "schema", "schema", True))
        rules, _ = translator.translate()
        helpers.append(sorted(name.split("_", 1)[1] for name in rules if name.startswith("h")))
        grammar = compiler.compile_json_schema(schema(n))
        m = Matcher(grammar)
        assert m.accept_token(compiler.vocab.token_id('{"'))
        stacks.append(len(m._history[-1]))
        doc = {"kind": "k1", "v": 3, "extra": [1]}
        jsonschema.validate(doc, schema(n))
        assert grammar.accepts(_compact(doc))
        assert not grammar.accepts(_compact({"kind": "k1", "v": "x", "extra": 1}))
    assert stacks[0] == stacks[1] and helpers[0] == helpers[1] == ["shared"]
