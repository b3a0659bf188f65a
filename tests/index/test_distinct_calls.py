"""uniqueItems over open domains: the matcher keeps array items distinct as JSON values.

Oracle: the `jsonschema` library (documents), and the automaton's own byte-exact `advance` for
masks (a token is in the mask exactly when advancing by it succeeds)."""

from __future__ import annotations

import json
import random

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constrain import Compiler, Matcher
from constrain.index.distinct_calls import DistinctCallsAutomaton

from token_choices import holding, short_or_all, text_ids  # tests/support

SCHEMAS = {
    "strings": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    "short_strings": {"type": "array", "items": {"type": "string", "maxLength": 3}, "uniqueItems": True},
    "numbers": {"type": "array", "items": {"type": "number"}, "uniqueItems": True},
    "objects": {"type": "array", "items": {"type": "object", "additionalProperties": {"type": "integer"}}, "uniqueItems": True},
    "anything": {"type": "array", "uniqueItems": True},
    "nested": {
        "type": "array",
        "uniqueItems": True,
        "items": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    },
    "tuple": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "string"}], "items": {"type": "integer"}, "uniqueItems": True},
    "in_object": {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}, "n": {"type": "integer"}},
        "required": ["tags"],
    },
    "with_contains": {"type": "array", "items": {"type": "string"}, "contains": {"const": "x"}, "uniqueItems": True},
}

scalars = st.sampled_from(["a", "b", "ab", "", "x", 1, 1.0, 2, 2.5, True, False, None, 0, -0.0, 10])
values = st.recursive(
    scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.sampled_from(["a", "b"]), kids, max_size=2),
    max_leaves=8,
)


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(values, max_size=5), key_order=st.randoms())
def test_accepts_exactly_the_valid_documents(name, items, key_order, compiler):
    schema = SCHEMAS[name]
    grammar = compiler.compile_json_schema(schema, property_order="any")
    assert isinstance(grammar.automaton, DistinctCallsAutomaton)
    doc = {"tags": items, "n": 1} if name == "in_object" else items
    valid = jsonschema.Draft202012Validator(schema).is_valid(doc)
    assert grammar.accepts(_compact(doc)) == valid, doc


@pytest.mark.parametrize(
    "name, text, ok",
    [
        ("strings", '["a","\\u0061"]', False),  # equal values, different spellings
        ("numbers", "[1,1.0]", False),
        ("numbers", "[1.5,15e-1]", False),
        ("numbers", "[1,10,100]", True),
        ("objects", '[{"a":1,"b":2},{"b":2,"a":1}]', False),
        ("anything", "[1,true]", True),
        ("anything", "[0,false,null,[],{}]", True),
        ("anything", '[[1,"a"],[1,"a"]]', False),
        ("nested", '[["a","b"],["b","a"]]', True),
        ("nested", '[["a","a"]]', False),
        ("tuple", '["a","a",1]', False),
        ("tuple", '["a","b",1,2]', True),
    ],
)
def test_values_compare_as_json(name, text, ok, compiler):
    assert compiler.compile_json_schema(SCHEMAS[name]).accepts(text) is ok
    assert jsonschema.Draft202012Validator(SCHEMAS[name]).is_valid(json.loads(text)) is ok


def _check_mask_against_advance(m: Matcher, llama3, rng: random.Random) -> None:
    """Every allowed token advances; every token of the inner (item-blind) mask that is not
    allowed is refused: checked on the tokens that could settle an item and on a sample."""
    compiled = m.compiled
    automaton = compiled.automaton
    state = m._history[-1]
    allowed = set(m.allowed_token_ids().tolist())
    inner_row = automaton.inner.mask_row(state[0])
    inner_ids = np.flatnonzero(np.unpackbits(inner_row.view(np.uint8), bitorder="little"))
    inner = set(inner_ids.tolist())
    assert allowed <= inner | set(llama3.eos_token_ids)
    settling = inner_ids[holding(llama3, b'",]}')[inner_ids]].tolist()  # (sorted, as inner_ids)
    sample = rng.sample(settling, min(250, len(settling))) + rng.sample(inner_ids.tolist(), min(100, len(inner)))
    for t in sample:
        if t in llama3.eos_token_ids:
            continue
        assert (compiled.next_state(state, t) is not None) == (t in allowed), (llama3.token_bytes[t], state)


@pytest.mark.parametrize("name", ["strings", "short_strings", "numbers", "objects", "nested", "in_object"])
def test_masked_walks_never_repeat_an_item(name, compiler, llama3):
    """Random walks that prefer the tokens of earlier items (to provoke duplicates) end in
    valid documents; masks agree with advance at every step and are never empty."""
    schema = SCHEMAS[name]
    grammar = compiler.compile_json_schema(schema)
    rng = random.Random(name)
    eos = set(llama3.eos_token_ids)
    for walk in range(3):
        m = Matcher(grammar)
        out: list[int] = []
        for step in range(30):
            allowed = m.allowed_token_ids()
            assert allowed.size, llama3.decode(out)
            if step % 4 == 0:
                _check_mask_against_advance(m, llama3, rng)
            if m.is_accepting() and (rng.random() < 0.15 or set(allowed.tolist()) <= eos):
                break
            choices = text_ids(allowed, llama3, eos)
            seen = choices[np.isin(choices, np.array(out, dtype=np.int64))]
            short = short_or_all(choices, llama3, 2)
            tid = int(rng.choice(seen)) if seen.size and rng.random() < 0.7 else int(rng.choice(short))
            assert m.accept_token(tid)
            out.append(tid)
        if m.is_accepting():
            doc = json.loads(llama3.decode(out).decode("utf-8"))
            jsonschema.validate(doc, schema)


def test_a_duplicate_string_is_refused_at_its_closing_quote(compiler, llama3):
    """`["ab","ab` may not close (the value would repeat); it may go on (`["ab","abc"]`)."""
    grammar = compiler.compile_json_schema(SCHEMAS["strings"])
    ids = {data: t for t, data in enumerate(llama3.token_bytes)}
    m = Matcher(grammar)
    assert m.accept_tokens([ids[b'["'], ids[b"ab"], ids[b'","'], ids[b"ab"]]) == 4
    allowed = {llama3.token_bytes[t] for t in m.allowed_token_ids().tolist()}
    assert b'"' not in allowed and b'"]' not in allowed and b'",' not in allowed
    assert b"c" in allowed and b"\\" in allowed
    assert not m.accept_token(ids[b'"]'])
    assert m.accept_tokens([ids[b"c"], ids[b'"]']]) == 2 and m.is_accepting()


@pytest.mark.parametrize(
    "prefix",
    ['["a.","a', '["a...","a.', '["x ","x', '["é","\\u00', '["é","\\u00e9', '["a\\"b","a\\', '["a\\"b","a'],
)
def test_tokens_closing_a_string_item_agree_with_advance(prefix, compiler, llama3):
    """Every token with a `"` (those whose first quote may close the item as a duplicate are
    the only ones stepped, see _closing_dups): allowed exactly when advancing succeeds."""
    grammar = compiler.compile_json_schema(SCHEMAS["strings"])
    state = grammar.automaton.advance(grammar.initial_state(), prefix.encode())
    assert state is not None
    row = grammar.automaton.mask_row(state)
    allowed = set(np.flatnonzero(np.unpackbits(row.view(np.uint8), bitorder="little")).tolist())
    quoted = [t for t, data in enumerate(llama3.token_bytes) if b'"' in data and t not in llama3.special_ids]
    for t in quoted:
        ok = grammar.automaton.advance(state, llama3.token_bytes[t]) is not None
        assert ok == (t in allowed), (prefix, llama3.token_bytes[t])
    closer = {'["a.","a': b'."', '["x ","x': b' "', '["a...","a.': b'.."'}.get(prefix)
    if closer is not None:  # the token that would close a duplicate is there, and refused
        assert closer in {llama3.token_bytes[t] for t in quoted}
        assert closer not in {llama3.token_bytes[t] for t in allowed}
