"""parse_partial: what a JSON prefix settles, checked against the whole document (the oracle:
json.loads of the full text) for every prefix."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.partial_json import parse_partial

scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False, width=32) | st.text(max_size=6)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=12)
containers = st.lists(values, max_size=4) | st.dictionaries(st.text(max_size=4), values, max_size=4)


def settled_within(part: Any, whole: Any) -> bool:
    """`part` is what a prefix of `whole`'s text may settle: equal scalars, objects with a subset
    of the members (each settled within), arrays with a prefix of the items (the last maybe open)."""
    if isinstance(whole, dict):
        return isinstance(part, dict) and all(k in whole and settled_within(v, whole[k]) for k, v in part.items())
    if isinstance(whole, list):
        if not isinstance(part, list) or len(part) > len(whole):
            return False
        head_equal = all(p == w for p, w in zip(part[:-1], whole))
        return head_equal and (not part or settled_within(part[-1], whole[len(part) - 1]))
    return part == whole and type(part) is type(whole)


@settings(max_examples=150, deadline=None)
@given(containers, st.booleans())
def test_every_prefix_settles_part_of_the_document_and_the_whole_settles_all(doc, spaced):
    text = json.dumps(doc, indent=1 if spaced else None, separators=None if spaced else (",", ":"))
    previous: Any = None
    for end in range(len(text) + 1):
        part = parse_partial(text[:end])
        if part is None:
            assert previous is None, text[:end]
            continue
        assert settled_within(part, doc), (text[:end], part)
        if previous is not None:
            assert settled_within(previous, part), (previous, part)
        previous = part
    assert parse_partial(text) == doc


def test_fields_appear_when_complete():
    text = '{"name":"Ada Lovelace","age":36,"tags":["a","b"]}'
    seen = []
    for end in range(len(text) + 1):
        part = parse_partial(text[:end])
        if part is not None and (not seen or seen[-1] != part):
            seen.append(part)
    assert seen == [
        {}, {"name": "Ada Lovelace"}, {"name": "Ada Lovelace", "age": 36},
        {"name": "Ada Lovelace", "age": 36, "tags": []}, {"name": "Ada Lovelace", "age": 36, "tags": ["a"]},
        {"name": "Ada Lovelace", "age": 36, "tags": ["a", "b"]},
    ]


@pytest.mark.parametrize("prefix", ['{"a":1', '{"a":tr', '{"a":"x\\"', '[1,2', '{"a', '{"a":'])
def test_unfinished_values_are_left_out(prefix):
    part = parse_partial(prefix)
    assert part in ({}, [1])


def test_escaped_quotes_end_strings_only_when_unescaped():
    assert parse_partial('{"a":"x\\"y","b":') == {"a": 'x"y'}


@pytest.mark.parametrize("bad", ['{"a" 1}', "[1 2]", "{1:2}", "nul!", "[}"])
def test_text_that_is_no_json_prefix_is_an_error(bad):
    with pytest.raises(ValueError, match="not a JSON prefix"):
        parse_partial(bad)
