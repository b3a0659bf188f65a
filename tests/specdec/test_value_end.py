"""Value ends (specdec/value_end.py): where a copied phrase ends (against a regular-expression
oracle), whether a copy continues a name, the closing byte and forced run a grammar has (against
a brute force over every byte), the model's spelling of the closing token, and the prompt lookup
drafting it (TextLookupDrafter with value_ends) on real Llama 3 tokens."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from constrain import Compiler, Matcher
from constrain.specdec.jump_forward import SpellingMemory
from constrain.specdec.text_lookup import TextLookupDrafter
from constrain.specdec.value_end import ValueCloser, continues_name, phrase_end
from lookup_oracle import spell  # tests/support


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


@pytest.fixture(scope="module")
def encode(tokenizer_files):
    tok = Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))
    return lambda text: tok.encode(text, add_special_tokens=False).ids


PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 30}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def person(compiler):
    return compiler.compile_json_schema(PERSON)


# -- phrase ends -------------------------------------------------------------------------------
def phrase_end_oracle(data: bytes, name: bool) -> int:
    pattern = rb"[,;!?)\n\r]|\.(?![A-Za-z0-9])" + (rb"| (?=[a-z])" if name else b"")
    m = re.search(pattern, data)
    return m.start() if m else -1


@settings(max_examples=400, deadline=None)
@given(data=st.lists(st.sampled_from(list(b"aZ9 .,;!?)\n-'\"")), max_size=16).map(bytes), name=st.booleans())
def test_phrase_end_matches_the_oracle(data, name):
    assert phrase_end(data, name) == phrase_end_oracle(data, name)


@pytest.mark.parametrize("text, name, end", [
    (b" Hopper, 85 years old", True, 7),
    (b" Baker just turned 52.", True, 6),
    (b" Baker just turned 52.", False, 21),
    (b" York City.", True, 10),
    (b" 3.5 kg", False, -1),
    (b"example.com is", False, -1),
    (b" Louis.<|im_end|>", True, 6),
    (b"", True, -1),
])
def test_phrase_end_examples(text, name, end):
    assert phrase_end(text, name) == end


@pytest.mark.parametrize("text, copied, expected", [
    ("My neighbour Tom Baker just turned 52.", " Baker just", True),  # after "Tom": mid-sentence
    ("extract: Grace Hopper, 85", " Hopper,", True),  # a sentence's first word, then a capital
    ("Review: The toaster broke after a week.", " toaster", False),  # a capital any sentence has
    ("Review: The Blue Kettle costs $12.", " Blue", True),
    ("It is 21 degrees in Paris today.", " today", True),
    ("the budget review is on", " review", False),
    ("Meet Ada Lovelace.", "a Lovelace", True),  # mid-word: the word the copy is in ("Ada")
    ("visit Oslo", "Oslo", True),  # at a word start: the copy's own first word
    ("visit Oslo", " Oslo", False),  # right after "visit"
    ("visit oslo", "oslo", False),
])
def test_continues_name(text, copied, expected):
    data = text.encode()
    start = data.index(copied.encode())
    assert continues_name(data, start) is expected


# -- the closing byte and its run ------------------------------------------------------------------
def closing_oracle(automaton, state) -> bytes:
    """The byte (ASCII punctuation) after which the grammar forces the longest run that holds a
    byte other than a letter, digit or "_", with the run (the lowest byte among equals); else the
    lowest byte after which only EOS is allowed; else b""."""
    best = b""
    complete = []
    for c in range(0x21, 0x7F):
        ch = chr(c)
        if ch.isalnum() or ch == "_":
            continue
        after = automaton.advance(state, bytes([c]))
        if after is None:
            continue
        run = automaton.forced_bytes(after)
        if re.search(rb"[^A-Za-z0-9_\x80-\xff]", run):
            if 1 + len(run) > len(best):
                best = bytes([c]) + run
        elif automaton.is_accepting(after) and all(automaton.advance(after, bytes([b])) is None for b in range(256)):
            complete.append(bytes([c]))
    return best or (complete[0] if complete else b"")


def test_closing_inside_a_json_string(person, encode, llama3):
    m = Matcher(person)
    assert m.accept_tokens(encode('{"name":"Grace Hopper')) == len(encode('{"name":"Grace Hopper'))
    closer = ValueCloser()
    assert closer.closing_bytes(person, m.state) == b'","age":'
    # no spelling seen: the tokenizer's first token of the closing bytes
    canonical = closer.closing_token(person, m.state, encode)
    assert spell(llama3, [canonical]) == b'","' == spell(llama3, encode('","age":')[:1])
    # the model spelled `",` before: its spelling wins (the longest such token seen)
    seen = encode('{"a":"x",') + encode('"y"')
    quote_comma = [t for t in seen if spell(llama3, [t]) == b'",']
    assert quote_comma
    assert closer.closing_token(person, m.state, encode, (seen,)) == quote_comma[0]
    assert m.validate_tokens([canonical]) == 1 and m.validate_tokens(quote_comma) == 1
    # greedy longest match without an encoder
    assert spell(llama3, [closer.closing_token(person, m.state, None)]) == b'","'


def test_the_last_property_closes_the_object(compiler, encode, llama3):
    g = compiler.compile_json_schema({"type": "object", "properties": {"city": {"type": "string"}},
                                      "required": ["city"], "additionalProperties": False})
    m = Matcher(g)
    out = encode('{"city":"Oslo')
    assert m.accept_tokens(out) == len(out)
    assert ValueCloser().closing_bytes(g, m.state) == b'"}'


def test_no_closing_where_nothing_leaves_the_value(compiler, encode):
    closer = ValueCloser()
    free = compiler.compile_regex(r'"[a-z ]*"[a-z]+')  # after the quote: letters, nothing forced
    m = Matcher(free)
    assert m.accept_tokens(encode('"abc')) == len(encode('"abc'))
    assert closer.closing_bytes(free, m.state) == b""
    assert closer.closing_token(free, m.state, encode) is None
    # a quote after which text may follow (a free grammar) forces nothing and closes nothing
    optional = compiler.compile_regex(r'"[a-z ]*"( [a-z]+)?')
    m = Matcher(optional)
    assert m.accept_tokens(encode('"abc')) == len(encode('"abc'))
    assert closer.closing_bytes(optional, m.state) == b""
    # a quote that completes the document closes it, though nothing is forced after it
    whole = compiler.compile_regex(r'"[a-z ]*"')
    m = Matcher(whole)
    assert m.accept_tokens(encode('"abc')) == len(encode('"abc'))
    assert closer.closing_bytes(whole, m.state) == b'"'


@settings(max_examples=60, deadline=None)
@given(prefix=st.sampled_from(['{"name":"', '{"name":"Ada', '{"name":"Ada L', '{"name":"x","age":', '{"name":"x","age":4',
                               '{"name":"x","age":42', '{', '{"name":"Ada\\', '{"name":"x","age":-']))
def test_closing_matches_the_brute_force(person, encode, llama3, prefix):
    m = Matcher(person)
    ids = encode(prefix)
    assert m.accept_tokens(ids) == len(ids)
    closer = ValueCloser()
    expected = closing_oracle(person.automaton, m.state)
    assert closer.closing_bytes(person, m.state) == expected
    token = closer.closing_token(person, m.state, encode)
    if token is not None:  # accepted, and a prefix of the closing bytes
        assert expected.startswith(spell(llama3, [token])) and m.validate_tokens([token]) == 1
    else:
        assert expected == b"" or m.validate_tokens(encode(expected.decode())[:1]) == 0


def test_the_memo_follows_the_grammar(person, compiler, encode):
    other = compiler.compile_json_schema({"type": "object", "properties": {"name": {"type": "string"}},
                                          "required": ["name"], "additionalProperties": False})
    closer = ValueCloser()
    m1, m2 = Matcher(person), Matcher(other)
    for m in (m1, m2):
        m.accept_tokens(encode('{"name":"Ada'))
    assert closer.closing_bytes(person, m1.state) == b'","age":'
    assert closer.closing_bytes(other, m2.state) == b'"}'
    assert closer.closing_bytes(person, m1.state) == b'","age":'


# -- the prompt lookup closes copied values ------------------------------------------------------------
def test_lookup_closes_a_name_before_the_next_word(person, encode, llama3):
    prompt = encode("My neighbour Tom Baker just turned 52.")
    out = encode('{"name":"Tom')
    m = Matcher(person)
    assert m.accept_tokens(out) == len(out)
    plain = TextLookupDrafter(encode, value_ends=False).propose(prompt + out, m, 10, None)
    assert spell(llama3, plain.tokens).startswith(b" Baker just turned")  # copied on
    closed = TextLookupDrafter(encode).propose(prompt + out, m, 10, None)
    assert spell(llama3, closed.tokens) == b' Baker","' and closed.closing == 0
    # one past the limit: the closing token is flagged for the caller
    tight = TextLookupDrafter(encode).propose(prompt + out, m, 1, None)
    assert spell(llama3, tight.tokens) == b' Baker","' and tight.closing == 1
    assert m.num_accepted_tokens == len(out)


def test_lookup_closes_where_the_grammar_cuts_the_copy(person, encode, llama3):
    prompt = encode("Sam is 41 years old.")
    out = encode('{"name":"Sam","age":4')
    m = Matcher(person)
    assert m.accept_tokens(out) == len(out)
    d = TextLookupDrafter(encode).propose(prompt + out, m, 10, None)
    assert spell(llama3, d.tokens) == b"1}"  # " years" is no digit: the object closes


def test_lookup_spells_the_closing_as_the_model_did(person, encode, llama3):
    prompt = encode("Grace Hopper, 85 years old.")
    out = encode('{"name":"Grace')
    m = Matcher(person)
    assert m.accept_tokens(out) == len(out)

    assert spell(llama3, TextLookupDrafter(encode).propose(prompt + out, m, 10, None).tokens) == b' Hopper","'
    memory = SpellingMemory()  # an earlier output spelled `",` then `"`
    memory.add(encode('{"a":"b') + encode('",') + encode('"c":1}'))
    drafter = TextLookupDrafter(encode)
    drafter.memory = memory
    d = drafter.propose(prompt + out, m, 10, None)
    assert spell(llama3, d.tokens) == b' Hopper",'


def test_no_closing_after_a_copied_eos(person, encode, llama3):
    """A copy on a token boundary can hold the context's EOS (an earlier turn's end): the
    grammar accepts it, and no value is closed after it."""
    eos = sorted(llama3.eos_token_ids)[0]
    prompt = encode('Last time: {"name":"Ada","age":41}') + [eos] + encode(" and then more.")
    out = encode('{"name":"Ada","age":41')
    m = Matcher(person)
    assert m.accept_tokens(out) == len(out)
    d = TextLookupDrafter(encode).propose(prompt + out, m, 10, None)  # the prompt's own tokens
    assert d.tokens[-1] == eos and spell(llama3, d.tokens[:-1]) == b"}"
    ended = person.next_state(person.next_state(m.state, d.tokens[0]), eos)
    assert ended is not None and ValueCloser().closing_bytes(person, ended) == b""
