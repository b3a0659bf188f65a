"""word_echo (the prompt lookup's fallback at a value's start) against a brute-force oracle on
random byte strings, its cases by hand, and the lookup drafter using it on a JSON extraction
with real Llama 3 tokens."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from constrain import Compiler, Matcher
from constrain.specdec.text_lookup import TextLookupDrafter
from constrain.specdec.word_echo import IS_WORD, word_echo
from lookup_oracle import is_word, word_echo_oracle  # tests/support

PIECES = [b"a", b"b", b"A", b"B", b"ab", b"Ab", b"1", b"_", b" ", b'"', b":", b",", b"\xc3\xa9", b"\xc3"]


def test_word_bytes_are_letters_digits_underscore_and_non_ascii():
    assert [b for b in range(256) if IS_WORD[b]] == [b for b in range(256) if is_word(b)]
    assert IS_WORD[ord("Z")] and IS_WORD[ord("0")] and IS_WORD[0xA9] and not IS_WORD[ord("-")]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=24).map(b"".join), st.integers(1, 6))
def test_matches_the_brute_force_oracle(data, max_word):
    assert word_echo(data, max_word) == word_echo_oracle(data, max_word)
    assert word_echo(bytearray(data), max_word) == word_echo_oracle(data, max_word)


@pytest.mark.parametrize("data, after", [
    (b'Grace Hopper, 85.\n{"name":"G', b"race Hopper, 85."),  # a value's first byte
    (b'Grace Hopper, 85.\n{"name":"Grace Hopper","age":8', b"5."),  # a number
    (b'a mathematician.\n"occupation":"Mat', b"hematician."),  # capitalized: ASCII case ignored
    (b"Gx Gy gz G", b"y gz"),  # the most recent word start, exact case
    (b"Gx gy gz Gy", b" gz"),  # no earlier "Gy": ignoring case, "gy"
    (b"xGrace g", None),  # one letter never ignores case; "G" inside a word is no word start
    (b"xGrace Gr", None),  # "Gr" only inside a word
    (b"Grace", None),  # no word before the partial one
    (b"Grace ", None),  # no partial word at the end
])
def test_cases(data, after):
    at = word_echo(data)
    if after is None:
        assert at == -1
    else:
        assert data[at:].startswith(after), data[at:]


def test_a_partial_word_longer_than_max_word_is_not_looked_up():
    assert word_echo(b"abcdef abcde", max_word=5) == 5
    assert word_echo(b"abcdef abcdef", max_word=5) == -1


@pytest.fixture(scope="module")
def encode(tokenizer_files):
    hf = Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))
    return lambda text: hf.encode(text, add_special_tokens=False).ids


@pytest.fixture(scope="module")
def person(llama3):
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
              "required": ["name", "age"], "additionalProperties": False}
    return Compiler(llama3).compile_json_schema(schema)


def _drafted(llama3, encode, person, prompt: str, output: str, **options) -> bytes:
    m = Matcher(person)
    out = encode(output)
    for t in out:
        assert m.accept_token(t)
    draft = TextLookupDrafter(encode, **options).propose(encode(prompt) + out, m, 8, None)
    return b"".join(llama3.token_bytes[t] for t in draft.tokens)


def test_the_drafter_copies_a_value_from_its_first_letter(llama3, encode, person):
    prompt = "Extract the person: Grace Hopper, 85 years old.\n"
    assert _drafted(llama3, encode, person, prompt, '{"name":"G', value_ends=False).startswith(b"race Hopper, 85")
    assert _drafted(llama3, encode, person, prompt, '{"name":"G', word_starts=False) == b""
    assert _drafted(llama3, encode, person, prompt, '{"name":"Grace Hopper","age":8', value_ends=False) == b"5"  # (cut by the grammar)
    # with value ends (the default), closed where the phrase ends (value_end.py)
    assert _drafted(llama3, encode, person, prompt, '{"name":"G') == b'race Hopper","'
    assert _drafted(llama3, encode, person, prompt, '{"name":"Grace Hopper","age":8') == b"5}"


def test_a_short_echo_of_punctuation_predicts_nothing(llama3, encode, person):
    prompt = 'Like {"id":"Ada"}, extract: Grace Hopper, 85.\n'
    # `":"` ends both the prompt's "id" key and the output's "name": no value follows from that
    assert _drafted(llama3, encode, person, prompt, '{"name":"') == b""
    assert _drafted(llama3, encode, person, prompt, '{"name":"', min_punctuation_match=3, value_ends=False) == b"Ada"
