"""The llguidance/vLLM extensions: an empty %llguidance header is read; what we cannot honour
yet is refused by name and line, never passed to Lark as a syntax error."""

from __future__ import annotations

import pytest

from constrain import GrammarError, UnsupportedGrammarError
from constrain.grammar.lark.dialect import read_dialect


def test_an_empty_header_is_removed():
    text, options = read_dialect('%llguidance {}\n\nstart: "a"\n')
    assert options == {} and text.strip() == 'start: "a"'


def test_strings_regexes_and_comments_are_left_alone():
    grammar = 'start: "%json {}" /<\\|x\\|>/ "<[1]>"  // %llguidance {"x": 1} <|eot_id|>\n'
    assert read_dialect(grammar) == (grammar, {})


@pytest.mark.parametrize(
    "text, construct",
    [
        ('start: "a" <|eot_id|>\n', "special token <|eot_id|>"),
        ('start: "a"\nend: <[128009]>\n', "special token <[128009]>"),
        ('start: %json {"type": "integer"}\n', "%json"),
        ('%llguidance {"no_forcing": true}\nstart: "a"\n', "%llguidance option 'no_forcing'"),
    ],
)
def test_what_we_cannot_honour_is_named(text, construct):
    with pytest.raises(UnsupportedGrammarError) as info:
        read_dialect(text)
    assert info.value.construct.startswith(construct)


def test_a_header_without_json_is_a_grammar_error():
    with pytest.raises(GrammarError, match="line 1"):
        read_dialect("%llguidance nope\nstart: \"a\"")
