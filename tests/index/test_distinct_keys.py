"""Objects of many properties in any order: the matcher keeps their keys distinct.

Oracle: the `jsonschema` library (documents), and the automaton's own byte-exact `advance` for
masks (a token is in the mask exactly when advancing by it succeeds). Schemas are generated with
12-40 properties (past the Graph's limit of 10), some required, additionalProperties true,
false or a schema, sometimes patternProperties and min/maxProperties; keys share prefixes and
some need escapes; some values are arrays of distinct items (uniqueItems, kept alongside)."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from constrain import Compiler, Matcher
from constrain.index.distinct_keys import DistinctKeysAutomaton

from distinct_walks import bits, keyed_walk  # tests/support

STEMS = ["name", "id", "type", "value", "key", "data", "item", "user", "tag", "x"]
SUFFIXES = ["", "s", "_id", "2", "Name", "-x", "é", " z"]
ODD = ['q"uote', "back\\slash", "new\nline", "日本", "a/b"]
NAMES = sorted({s + x for s in STEMS for x in SUFFIXES} | set(ODD))
OTHER_KEYS = ["zz", "other", "x-a", "x-", "names2", "\u0007", "idz"]  # not in NAMES
VALUES = [
    {"type": "integer", "minimum": 0, "maximum": 99},
    {"type": "string", "maxLength": 4},
    {"type": "boolean"},
    {"enum": ["a", "b", 1]},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "maxItems": 2},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
    {"type": "array", "items": {"type": "string"}, "uniqueItems": True},  # (bounded strings: see distinct_calls.py limits)
]
SMALL = {"type": "integer", "minimum": 0, "maximum": 9}


@st.composite
def schemas(draw):
    names = draw(st.lists(st.sampled_from(NAMES), min_size=12, max_size=40, unique=True))
    props = {k: draw(st.sampled_from(VALUES)) for k in names}
    required = draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True))
    addl = draw(st.sampled_from([True, False, SMALL]))
    schema = {"type": "object", "properties": props, "additionalProperties": addl}
    if required:
        schema["required"] = required
    if draw(st.booleans()) and draw(st.booleans()):
        schema["patternProperties"] = {"^x-": {"type": ["boolean", "integer", "string", "array", "object"]}}
    closed = addl is False and "patternProperties" not in schema
    if draw(st.booleans()):  # (more than the keys there are: unsatisfiable, see test_json_any_order)
        schema["minProperties"] = draw(st.integers(0, len(names) if closed else len(names) + 2))
    if (not required or closed) and draw(st.booleans()):  # (else refused, see test_json_any_order)
        lo = schema.get("minProperties", 0)
        schema["maxProperties"] = draw(st.integers(max(lo, 1, len(names) if required else 0), len(names) + 3))
    return schema


def _value_for(schema: dict, rng: random.Random):
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "integer":
        return rng.randint(0, 120)
    if kind == "string":
        return rng.choice(["", "ab", "abcde", "é"])
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        if schema["items"].get("type") == "string":
            return [rng.choice(["a", "b", "ab"]) for _ in range(rng.randint(0, 3))]
        return [rng.randint(0, 9) for _ in range(rng.randint(0, 3))]
    if kind == "object":
        return rng.choice([{}, {"a": 1}, {"b": 2}])
    return rng.randint(0, 9)


def instances(schema: dict, rng: random.Random) -> dict:
    """A document aimed at the schema (keys in random order); jsonschema says if it is valid."""
    props = schema["properties"]
    keys = [k for k in props if k in schema.get("required", ()) or rng.random() < 0.6]
    if schema["additionalProperties"] is not False and rng.random() < 0.5:
        keys += rng.sample(OTHER_KEYS, rng.randint(1, 3))
    rng.shuffle(keys)
    out = {}
    for k in keys:
        sub = props.get(k) or (schema.get("patternProperties", {}).get("^x-") if k.startswith("x-") else None)
        if sub is None:
            sub = SMALL if schema["additionalProperties"] is not True else {}
        out[k] = _value_for(sub, rng)
    return out


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class _Encoder:
    def __init__(self, path: str) -> None:
        self.tok = Tokenizer.from_file(path)

    def __call__(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False).ids

    def __repr__(self) -> str:
        return "llama3-encoder"


@pytest.fixture(scope="module")
def encode(tokenizer_files):
    return _Encoder(str(tokenizer_files["llama3"] / "tokenizer.json"))


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


def _valid(schema, doc) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(doc)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(schema=schemas(), seed=st.integers(0, 2**32 - 1))
def test_accepts_exactly_the_valid_documents(schema, seed, compiler, encode):
    """Documents in any key order: accepted exactly when jsonschema finds them valid, valid ones
    token by token with the Llama 3 tokenizer; a repeated key or a missing required one is
    refused."""
    grammar = compiler.compile_json_schema(schema, property_order="any")
    assert isinstance(grammar.automaton, DistinctKeysAutomaton)
    rng = random.Random(seed)
    for _ in range(4):
        doc = instances(schema, rng)
        text = _compact(doc)
        valid = _valid(schema, doc)
        assert grammar.accepts(text) == valid, text
        if valid:
            ids = encode(text)
            m = Matcher(grammar)
            assert m.accept_tokens(ids) == len(ids), text
            assert m.is_accepting(), text
        if doc:
            members = [f"{json.dumps(k, ensure_ascii=False)}:{_compact(v)}" for k, v in doc.items()]
            twice = rng.choice(members)
            members.insert(rng.randint(0, len(members)), twice)
            assert not grammar.accepts("{" + ",".join(members) + "}")
        missing = [k for k in schema.get("required", ()) if k in doc]
        if missing:
            gone = rng.choice(missing)
            assert not grammar.accepts(_compact({k: v for k, v in doc.items() if k != gone}))


@pytest.fixture(scope="module")
def quote_ids(llama3):
    return [t for t, data in enumerate(llama3.token_bytes) if b'"' in data and t not in llama3.special_ids]


@pytest.mark.slow  # (its time is jsonschema's validation; other tests run these walks bounds-checked)
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(schema=schemas(), seed=st.integers(0, 2**32 - 1))
def test_masked_walks_end_in_valid_documents(schema, seed, compiler, llama3, quote_ids):
    """Walks that sample only from the mask never meet an empty mask, and the documents they
    finish are valid; masks agree with advance along the way."""
    grammar = compiler.compile_json_schema(schema, property_order="any")
    rng = random.Random(seed)
    for _ in range(2):
        ended, text = keyed_walk(grammar, llama3, rng, 160, 16, quote_ids)
        if ended:
            jsonschema.validate(json.loads(text), schema)


WORDS = ["name", "namespace", "named", "id", "identifier", "idx", "type", "types", "typed", "value", "values", "key"]
DIGIT = {"type": "integer", "minimum": 0, "maximum": 9}
FIXED = {
    "closed": {"type": "object", "properties": {w: DIGIT for w in WORDS}, "required": ["key", "id"], "additionalProperties": False},
    "all_required": {"type": "object", "properties": {w: DIGIT for w in WORDS}, "required": WORDS, "additionalProperties": False},
    "at_most_five": {"type": "object", "properties": {w: DIGIT for w in WORDS}, "additionalProperties": False, "maxProperties": 5},
    "at_least_eleven": {"type": "object", "properties": {w: DIGIT for w in WORDS}, "additionalProperties": False, "minProperties": 11},
    "patterns": {"type": "object", "properties": {w: DIGIT for w in WORDS}, "patternProperties": {"^x-": DIGIT}, "additionalProperties": False, "required": ["type"]},
    "open": {"type": "object", "properties": {w: DIGIT for w in WORDS}, "additionalProperties": DIGIT, "maxProperties": 14},
    "nested": {
        "type": "object",
        "properties": {
            **{w: {"type": "object", "properties": {v: {"type": "boolean"} for v in WORDS}, "required": ["id"], "additionalProperties": False} for w in WORDS[:6]},
            **{w: DIGIT for w in WORDS[6:]},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
    "two_branches": {  # two objects at once until a key tells them apart
        "anyOf": [
            {"type": "object", "properties": {w: DIGIT for w in WORDS}, "required": ["name"], "additionalProperties": False},
            {"type": "object", "properties": {w: {"type": "boolean"} for w in WORDS[1:]}, "additionalProperties": {"type": "string"}},
        ]
    },
    "unique_items": {  # arrays of distinct items inside and around keyed objects
        "type": "array", "uniqueItems": True, "maxItems": 3,
        "items": {
            "type": "object",
            "properties": {**{w: DIGIT for w in WORDS}, "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
            "additionalProperties": False,
        },
    },
    "array_of_objects": {
        "type": "array", "maxItems": 3,
        "items": {"type": "object", "properties": {w: {"type": "boolean"} for w in WORDS}, "additionalProperties": False, "minProperties": 2},
    },
}


@pytest.mark.parametrize("whitespace", ["compact", "flexible"])
@pytest.mark.parametrize("name", sorted(FIXED))
def test_walks_on_keys_that_share_prefixes(name, whitespace, compiler, llama3, quote_ids):
    """Keys that begin other keys (`name`, `named`, `namespace`): once some are used, their
    prefixes are refused exactly where only used keys could complete them."""
    schema = FIXED[name]
    grammar = compiler.compile_json_schema(schema, property_order="any", whitespace=whitespace)
    rng = random.Random(name + whitespace)
    ended = 0
    for _ in range(3):
        done, text = keyed_walk(grammar, llama3, rng, 260, 7, quote_ids)
        if done:
            ended += 1
            jsonschema.validate(json.loads(text), schema)
    if whitespace == "compact" and name in ("closed", "all_required", "at_most_five", "at_least_eleven"):
        assert ended, "no walk finished a document"


def _allowed_after(grammar, vocab, text: bytes) -> set[bytes]:
    """The bytes of the tokens the mask allows after `text`."""
    state = grammar.automaton.advance(grammar.initial_state(), text)
    assert state is not None, text
    eos = set(vocab.eos_token_ids)
    return {vocab.token_bytes[t] for t in bits(grammar.mask_row(state)) if t not in eos}


def test_a_used_key_is_refused_as_soon_as_only_used_keys_complete_it(compiler, llama3):
    grammar = compiler.compile_json_schema(FIXED["closed"], property_order="any")
    after = _allowed_after(grammar, llama3, b'{"name":1,"')
    assert b"name" in after  # `named`, `namespace` remain
    assert b'name":' not in after and b'name"' not in after
    after = _allowed_after(grammar, llama3, b'{"name":1,"namespace":2,"named":3,"')
    assert not {b"name", b"nam", b"na", b"n"} & after  # every key beginning with them is used
    assert {b"id", b"type", b"key"} <= after
    assert b"names" not in _allowed_after(grammar, llama3, b'{"namespace":1,"')
    assert not grammar.accepts(b'{"name":1,"namespace":2,"named":3,"name":4}')


def test_closing_brace_and_comma_follow_the_counts(compiler, llama3):
    grammar = compiler.compile_json_schema(FIXED["at_most_five"], property_order="any")
    allowed = _allowed_after(grammar, llama3, b'{"name":1,"id":2,"type":3,"key":4,"value":5')
    assert b"}" in allowed and b"," not in allowed and b",\"" not in allowed
    grammar = compiler.compile_json_schema(FIXED["closed"], property_order="any")
    allowed = _allowed_after(grammar, llama3, b'{"key":1')
    assert b"}" not in allowed and b"," in allowed
    assert b"}" in _allowed_after(grammar, llama3, b'{"key":1,"id":2')
    grammar = compiler.compile_json_schema(FIXED["at_least_eleven"], property_order="any")
    ten = b",".join(b'"%s":1' % w.encode() for w in WORDS[:10])
    assert b"}" not in _allowed_after(grammar, llama3, b"{" + ten)
    assert b"}" in _allowed_after(grammar, llama3, b"{" + ten + b',"key":0')


def test_keys_compare_by_value(compiler, llama3):
    """Other keys are compared decoded: `"\\u0062"` repeats `"b"`, and a token that completes
    an escape into a used key is refused."""
    schema = {"type": "object", "properties": {w: DIGIT for w in WORDS}, "additionalProperties": True}
    grammar = compiler.compile_json_schema(schema, property_order="any")
    assert grammar.accepts('{"b":1,"c":2}')
    assert not grammar.accepts('{"b":1,"\\u0062":2}')
    assert not grammar.accepts('{"\\u0062c":1,"bc":2}')
    assert not grammar.accepts('{"name":1,"type":2,"name":3}')
    after = _allowed_after(grammar, llama3, b'{"bc":1,"b')
    assert b'c"' not in after and b'c":' not in after and b"c" in after
    state = grammar.automaton.advance(grammar.initial_state(), b'{"b":1,"\\u00')
    row = bits(grammar.mask_row(state))
    ids = {data: t for t, data in enumerate(llama3.token_bytes)}
    for data in (b'62"', b'62":', b"62", b'63"', b'63":'):
        t = ids.get(data)
        if t is not None:
            assert (t in row) == (grammar.next_state(state, t) is not None), data
            assert (t in row) == (not data.startswith(b'62"')), data


def test_masks_agree_with_advance_at_key_positions(compiler, llama3, quote_ids):
    """Every token, at positions where keys open, go on and close, with some keys used."""
    grammar = compiler.compile_json_schema(FIXED["patterns"], property_order="any")
    for prefix in (b'{"name":1,', b'{"name":1,"', b'{"name":1,"na', b'{"name":1,"named":2,"nam', b'{"x-a":1,"x-', b'{"type":1,"x-a":2,"'):
        state = grammar.automaton.advance(grammar.initial_state(), prefix)
        assert state is not None, prefix
        row = bits(grammar.automaton.mask_row(state))
        for t, data in enumerate(llama3.token_bytes):
            if t in llama3.special_ids or t in llama3.eos_token_ids:
                continue
            if b'"' in data or t % 7 == 0:
                assert (t in row) == (grammar.automaton.advance(state, data) is not None), (prefix, data)


def test_tokens_spanning_a_key_and_the_objects_end():
    """A vocabulary with tokens that close a key, hold a value and reach the object's `,` or
    `}` (`":1}`): the key they close switches the rule variant inside them, so the mask adds
    or removes them against the inner row. Every token agrees with advance at every prefix."""
    from constrain import Vocabulary

    extra = [b'":1}', b'":1,', b'":1,"', b'1":1}', b'":1}]', b'"k1', b'k1":1}', b'":1},{"', b'","', b'":', b',"k']
    table = sorted({bytes([b]) for b in range(256)} | set(extra)) + [b"<eos>"]
    vocab = Vocabulary(table, {len(table) - 1}, {len(table) - 1}, name="spanning")
    keys = [f"k{i}" for i in range(12)]
    schemas = [
        {"type": "object", "properties": {k: DIGIT for k in keys}, "required": ["k1", "k2"], "additionalProperties": False},
        {"type": "object", "properties": {k: DIGIT for k in keys}, "minProperties": 3, "maxProperties": 4},
        {"type": "array", "items": {"type": "object", "properties": {k: DIGIT for k in keys}, "required": ["k1"]}},
    ]
    texts = [
        '{"k2":1,"k1":1}',
        '{"k3":1,"k4":1,"k1":1,"k5":1}',
        '[{"k2":1,"k1":1},{"k1":1}]',
    ]
    compiler = Compiler(vocab)
    for schema, text in zip(schemas, texts):
        grammar = compiler.compile_json_schema(schema, property_order="any")
        automaton = grammar.automaton
        assert {vocab.token_bytes[t] for t in automaton.keys.spanning} >= {b'":1}', b'":1,', b'k1":1}'}
        data = text.encode()
        for cut in range(len(data)):
            state = automaton.advance(automaton.initial_state(), data[:cut])
            assert state is not None, data[:cut]
            row = bits(automaton.mask_row(state))
            for t, token in enumerate(vocab.token_bytes[:-1]):
                assert (t in row) == (automaton.advance(state, token) is not None), (data[:cut], token)
        assert grammar.accepts(text)
