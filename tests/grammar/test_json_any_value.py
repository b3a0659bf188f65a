"""any_value.py: the rules of every JSON value (their language is checked against json.loads in
tests/index/test_stack_index.py)."""

from __future__ import annotations

from constrain.automata.rule_facts import callees
from constrain.grammar.json_schema.any_value import json_value_rules


def test_strings_are_read_inline():
    """Values and keys read their strings without a call: a token leaving a string then crosses
    one rule boundary fewer at mask time. `json_string` stays for grammars that call it."""
    rules = json_value_rules()
    assert set(rules) == {"json_value", "json_object", "json_array", "json_string"}
    assert set(callees(rules["json_value"])) == {"json_object", "json_array"}
    assert set(callees(rules["json_object"])) == {"json_value"}
    assert set(callees(rules["json_array"])) == {"json_value"}
    assert callees(rules["json_string"]) == ()


def test_rules_are_made_once_and_handed_out_as_copies():
    first, second = json_value_rules(), json_value_rules()
    assert first is not second and first == second
    assert all(first[name] is second[name] for name in first)
    first.clear()
    assert json_value_rules() == second
