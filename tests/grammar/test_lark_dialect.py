"""The llguidance/vLLM extensions: an empty %llguidance header is read; what we cannot honour
yet is refused by name and line, never passed to Lark as a syntax error."""

from __future__ import annotations

import pytest

from constrain import GrammarError, UnsupportedGrammarError
from constrain.grammar.lark.dialect import Dialect, read_dialect
from constrain.grammars import NAMES, load


def test_an_empty_header_is_removed():
    d = read_dialect('%llguidance {}\n\nstart: "a"\n')
    assert d.options == {} and d.specials == {} and d.text.strip() == 'start: "a"'


def test_strings_regexes_and_comments_are_left_alone():
    grammar = 'start: "%json {}" /<\\|x\\|>/ "<[1]>"  // %llguidance {"x": 1} <|eot_id|>\n'
    d = read_dialect(grammar)
    assert (d.text, d.options, d.specials, d.schemas) == (grammar, {}, {}, {})


@pytest.mark.parametrize("name", NAMES)
def test_a_grammar_without_extensions_comes_back_as_written(name):
    """No `%llguidance`, `%json` or special token anywhere: the text itself, nothing declared
    (the scan is skipped); with one of them in a comment the scan gives the same text."""
    grammar = load(name)
    assert read_dialect(grammar) == Dialect(grammar)
    commented = grammar + "// %json {} <|x|>\n"
    assert read_dialect(commented) == Dialect(commented)


@pytest.mark.parametrize(
    "text, construct",
    [
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


def test_special_tokens_become_declared_terminals():
    d = read_dialect('start: "a" <|eot_id|> b\nb: <[128009]> <|eot_id|>\n')
    text, specials = d.text, d.specials
    assert specials == {"CONSTRAIN_SPECIAL_0": "<|eot_id|>", "CONSTRAIN_SPECIAL_1": "<[128009]>"}
    assert "%declare CONSTRAIN_SPECIAL_0" in text and "<|" not in text and text.count("CONSTRAIN_SPECIAL_0") == 3


def test_json_schemas_become_declared_terminals():
    d = read_dialect('start: "x=" %json {"type": "object", "properties": {"a": {"type": "integer"}}} ";"\n')
    assert d.schemas == {"CONSTRAIN_JSON_0": {"type": "object", "properties": {"a": {"type": "integer"}}}}
    assert d.text.startswith('start: "x="  CONSTRAIN_JSON_0  ";"') and "%declare CONSTRAIN_JSON_0" in d.text


def test_imports_files_tells_file_imports_from_lark_built_ins(tmp_path):
    from constrain.grammar.lark.dialect import imports_files

    assert not imports_files('start: "a"\n')
    assert not imports_files("start: WS\n%import common.WS\n%import common (NUMBER, WORD)\n")
    assert not imports_files("  %import unicode.LETTER\n%import python.NAME -> N\n")
    assert imports_files("start: X\n%import .local.X\n")
    assert imports_files("start: X\n%import mylib.X\n")
    assert not imports_files('s: "%import mylib.X"\n')  # (not at a line's start: text, not an import)
    # A file in a searched folder may stand in for a built-in's name.
    assert not imports_files("start: WS\n%import common.WS\n", [str(tmp_path)])
    (tmp_path / "common.lark").write_text("WS: /[ ]+/\n")
    assert imports_files("start: WS\n%import common.WS\n", [str(tmp_path)])
