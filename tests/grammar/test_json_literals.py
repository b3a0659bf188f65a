"""JSON values as keys and partial strings (literals.py): the equality `uniqueItems` uses,
checked against the jsonschema library's own uniqueItems."""

from __future__ import annotations

import json

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.grammar.json_schema.literals import string_prefix, text_key, value_key

values = st.recursive(
    st.none() | st.booleans() | st.sampled_from([0, 1, 1.0, -0.0, 2, 2.5, 10**20, 1e20]) | st.sampled_from(["", "a", "é"]),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.sampled_from(["a", "b"]), kids, max_size=2),
    max_leaves=6,
)
UNIQUE = jsonschema.Draft202012Validator({"uniqueItems": True})


@settings(max_examples=400, deadline=None)
@given(a=values, b=values)
def test_value_keys_equal_exactly_when_jsonschema_calls_items_equal(a, b):
    assert (value_key(a) == value_key(b)) == (not UNIQUE.is_valid([a, b]))


@given(a=values)
def test_text_key_reads_any_spelling(a):
    assert text_key(json.dumps(a).encode()) == value_key(a)
    assert text_key(json.dumps(a, indent=1, ensure_ascii=False).encode()) == value_key(a)


def test_string_prefix_of_partial_strings():
    assert string_prefix(b'"ab') == "ab"
    assert string_prefix(b'"ab"') == "ab"
    assert string_prefix(b'"a\\') == "a"
    assert string_prefix(b'"a\\u00') == "a"
    assert string_prefix(b'"a\\u0062') == "ab"
    assert string_prefix('"é'.encode()[:-1]) == ""  # half a UTF-8 character
    assert string_prefix(b'"\\ud83d') == ""  # half a surrogate pair
    assert string_prefix(b"12") is None
