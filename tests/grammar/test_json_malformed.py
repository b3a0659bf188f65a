"""Schemas with keyword values of the wrong type (found by mutating real-world schemas, each
once a bare TypeError or ValueError): a SchemaError names the place by its JSON pointer, from
the meta-schema check that runs after the translator fails; a failure on a well-formed schema
is not disguised."""

from __future__ import annotations

import pytest

from constrain import SchemaError
from constrain.grammar.json_schema import translate
from constrain.grammar.json_schema.malformed import malformed

MALFORMED = [
    ({"type": 0}, "#/type"),
    ({"properties": {"a": {"type": "object", "required": True}}}, "#/properties/a/required"),
    ({"type": "object", "properties": {"a~b/c": {"type": 5}}}, "#/properties/a~0b~1c/type"),
    ({"$schema": "http://json-schema.org/draft-04/schema#", "items": 3}, "#/items"),
    ({"$defs": {"x": {"minItems": "three"}}, "$ref": "#/$defs/x"}, "#/$defs/x/minItems"),
    ({"$schema": "http://json-schema.org/draft-04/schema#", "prefixItems": 1.5}, "#/prefixItems"),  # (2020-12's word)
]


@pytest.mark.parametrize("schema, pointer", MALFORMED)
def test_a_malformed_schema_is_named_by_its_pointer(json_compiler, schema, pointer):
    with pytest.raises(SchemaError) as info:
        json_compiler.compile_json_schema(schema)
    assert info.value.pointer == pointer


def test_well_formed_schemas_and_resources_pass_the_check():
    assert malformed({"type": "object", "properties": {"a": {"type": "integer", "minimum": 3}}}, {}) is None
    assert malformed(True, {"urn:x": {"type": "string"}}) is None
    error = malformed({"$ref": "urn:x"}, {"urn:x": {"type": 7}})
    assert error is not None and "urn:x" in str(error) and error.pointer == "#/type"
    assert malformed([], {}) is not None


def test_a_translator_failure_on_a_well_formed_schema_stays_visible(json_compiler, monkeypatch):
    def broken(self):
        raise TypeError("a bug of ours")

    monkeypatch.setattr(translate.Translator, "translate", broken)
    with pytest.raises(TypeError, match="a bug of ours"):
        json_compiler.compile_json_schema({"type": "object", "title": "not cached before"})
