"""The llguidance/vLLM extensions: what llguidance reads (its header, rule options, `""`,
special tokens by name and id, %json) is read as it reads it; what we cannot honour is refused
by name and line, never passed to Lark as a syntax error."""

from __future__ import annotations

import pytest

from constrain import Compiler, GrammarError, Matcher, UnsupportedGrammarError
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
        ('%llguidance {"allow_invalid_utf8": true}\nstart: "a"\n', "%llguidance option 'allow_invalid_utf8'"),
        ('start: A\nA: %regex {"substring_words": "a b"}\n', "llguidance's %regex"),
        ('start: "a" @other\n', "llguidance's @name"),
        ('%llguidance {"no_forcing": "yes"}\nstart: "a"\n', "%llguidance option 'no_forcing'"),  # (not a bool)
    ],
)
def test_what_we_cannot_honour_is_named(text, construct):
    with pytest.raises(UnsupportedGrammarError) as info:
        read_dialect(text)
    assert info.value.construct.startswith(construct)


@pytest.mark.parametrize(
    "text, construct, where",
    [
        ('start: foo\nfoo[stop="x"]: /a+/\n', "llguidance option 'stop'", "rule foo"),
        ('start: foo\nfoo[lazy, max_tokens=3]: /a+/\n', "llguidance option 'max_tokens'", "rule foo"),
        ("start: FOO\nFOO[temperature=0.5]: /a+/\n", "llguidance option 'temperature'", "terminal FOO"),
        ('start: foo\nfoo[greedy]: /a+/\n', "llguidance option 'greedy'", "rule foo"),  # (no such option)
        ('start: foo\nfoo[suffix]: /a+/\n', "llguidance option 'suffix'", "rule foo"),  # (without its text)
        ('start: foo\nfoo[lazy]: bar "x"\nbar: "a"\n', "llguidance option 'lazy' on a rule that uses rules", "rule foo"),
        ('start: T\nT: foo "x"\nfoo[lazy]: /a+/\n', "a lazy rule inside a terminal", "terminal T"),
        ('start: x\nx: "a" & ~"b"\n', "llguidance's & or ~ in a rule", "rule x"),
        ('start: x{0,1000}\nx: "a"\n', "a count above 256 in a rule", "rule start"),
    ],
)
def test_rule_options_we_cannot_honour_are_named(text, construct, where, llama3):
    """llguidance's rule options that change what the model may sample (a token budget, a
    temperature, a stop text taken back) or that we do not know: refused by name and rule."""
    with pytest.raises(UnsupportedGrammarError) as info:
        Compiler(llama3).compile_lark(text)
    assert (info.value.construct, info.value.where) == (construct, where)


def test_rule_options_that_keep_the_language_are_read(llama3):
    """Captures change no text; `lazy` takes the shortest match, `suffix` ends the lexeme with its
    text (tests/grammars/test_peers_lark.py compares such grammars with llguidance)."""
    compiler = Compiler(llama3)
    captured = compiler.compile_lark('start: foo "b"\nfoo[capture="x"]: "a"+\n')
    assert captured.accepts(b"aab") and not captured.accepts(b"b")
    tool = compiler.compile_lark('start: (call | TEXT)*\ncall: head "=f>" /[0-9]+/ "</f>"\nhead[lazy]: TEXT "<f"\n'
                                 'TEXT: /[a-z ]+/\n')
    assert tool.accepts(b"hi <f=f>12</f> bye") and not tool.accepts(b"hi <f=f>12")
    ended = compiler.compile_lark('start: w "."\nw[suffix="!"]: /[a!]*/\n')
    assert ended.accepts(b"a!.") and not ended.accepts(b"a!!.") and not ended.accepts(b"a.")
    # & and ~: free text that cannot hold the trigger, so text after it must be a call
    forced = compiler.compile_lark('start: call* TEXT?\ncall: head "=f>" /[0-9]+/ "</f>"\nhead[lazy]: TEXT "<f"\n'
                                   'TEXT: /[a-z <=>\\/0-9]+/ & ~/(?s:.*)<f(?s:.*)/\n')
    assert forced.accepts(b"hi <f=f>12</f> bye") and not forced.accepts(b"x <f=g>")
    with pytest.raises(GrammarError, match="no text at all"):
        compiler.compile_lark("start: A\nA: /a/ & /b/\n")
    counted = compiler.compile_lark('start: A ";" w\nA: "a"{2,1000}\nw[lazy]: "b"{300}\n%ignore " "{1,999}\n')  # (no bound in terminals)
    assert counted.accepts(b"a" * 1000 + b";" + b"b" * 300) and not counted.accepts(b"a" * 1001 + b";" + b"b" * 300)


def test_no_forcing_changes_nothing():
    """llguidance's no_forcing lets the model choose how forced text is tokenized: our masks do so anyway."""
    d = read_dialect('%llguidance {"no_forcing": true}\nstart: "a"\n')
    assert d.options == {"no_forcing": True} and d.text.strip() == 'start: "a"'


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


# llguidance's reading of what Lark refuses (the answers are llguidance 1.x's, checked by hand;
# tests/grammars/test_peers_lark.py compares random texts with llguidance itself)
NOTHING_AS_LLGUIDANCE_READS_IT = [
    ('start: "a" "" "b"', {"ab": True, "a": False, "b": False}),
    ('start: ""', {"": True, "a": False}),
    ('start: T\nT: ""', {"": True, "a": False}),
    ('start: ("a" | "")+ "b"', {"b": True, "aab": True, "ba": False}),
    ('start: T "b"\nT: /a*/', {"b": True, "ab": True, "aab": True, "a": False}),
    ('start: "x" T\nT: /a*/', {"x": True, "xa": True, "": False}),
    ('start: "x" /a*/ "y"', {"xy": True, "xay": True, "xby": False}),
    ('start: T "a"\nT: /a*/', {"a": True, "aa": False}),  # (T takes both: its longest match)
    ('start: T T "b"\nT: /a*/', {"b": True, "ab": True, "aab": True}),
    ('start: "x" "y"\n%ignore /\\s*/', {"xy": True, "x  y": True, " x y ": True, "x\ty": True, "x-y": False}),
    ('start: "x" T "y"\nT: /(ab)*/\n%ignore " "', {"xy": True, "x y": True, "x ab y": True, "xabab y": True, "xa y": False}),
    ('start: "x" T "y"\nT: /(?:)/', {"xy": True, "xay": False}),
]


@pytest.mark.parametrize("text, answers", NOTHING_AS_LLGUIDANCE_READS_IT)
def test_empty_literals_and_terminals_that_match_nothing_read_as_llguidance_reads_them(text, answers, llama3):
    """`""` is nothing and a terminal matching the empty text is optional where used: Lark
    refuses both, llguidance reads them, and grammars written for it use them (its rfc.lark)."""
    grammar = Compiler(llama3).compile_lark(text)
    assert {s: grammar.accepts(s.encode()) for s in answers} == answers


def test_special_tokens_by_name_and_id_are_allowed_exactly_where_the_grammar_has_them(llama3):
    """`<|python_tag|>` (a special token, never text) is allowed where the rule names it and
    nowhere else; accepting it steps the grammar; `<[id]>` names it by id."""
    compiler = Compiler(llama3)
    tag = llama3.token_bytes.index(b"<|python_tag|>")
    for spelled in ("<|python_tag|>", f"<[{tag}]>"):
        grammar = compiler.compile_lark(f'start: "call" {spelled} NAME\nNAME: /[a-z]+/\n')
        m = Matcher(grammar)
        assert m.allowed_token_ids().tolist() and tag not in m.allowed_token_ids().tolist()
        assert m.accept_token(llama3.token_bytes.index(b"call"))
        assert m.allowed_token_ids().tolist() == [tag]  # only the special token, no text
        assert m.forced_bytes() == b""
        assert m.accept_token(tag) and not m.is_accepting()
        assert tag not in m.allowed_token_ids().tolist()
        assert m.accept_token(llama3.token_bytes.index(b"abc")) and m.is_accepting()
    plain = Matcher(compiler.compile_lark('start: "call" NAME\nNAME: /[a-z]+/\n'))
    assert plain.accept_token(llama3.token_bytes.index(b"call")) and not plain.accept_token(tag)
    with pytest.raises(GrammarError, match="no special token <|nope|>"):
        compiler.compile_lark('start: "a" <|nope|>')
    with pytest.raises(UnsupportedGrammarError, match="only special tokens"):
        compiler.compile_lark('start: "a" <[100]>')


def test_lists_and_ranges_of_special_token_ids(llama3):
    """llguidance's `<[a-b,c]>`: exactly those special tokens; a list that names a normal token
    (`^` and `*` always do) is refused by name, however long its range."""
    compiler = Compiler(llama3)
    eot, eom = (llama3.token_bytes.index(t) for t in (b"<|eot_id|>", b"<|eom_id|>"))
    both = Matcher(compiler.compile_lark(f'start: "a" <[{eom},{eot}]>\n'))
    assert both.accept_token(llama3.token_bytes.index(b"a")) and both.allowed_token_ids().tolist() == sorted([eot, eom])
    every = Matcher(compiler.compile_lark(f'start: <[{llama3.size - 256}-{llama3.size - 1}]> "a"\n'))
    assert every.allowed_token_ids().tolist() == list(range(llama3.size - 256, llama3.size))
    for written, named in (("<[*]>", "normal tokens"), ("<[^128009]>", "normal tokens"), ("<[128255-999999999]>", "id 128256")):
        with pytest.raises(UnsupportedGrammarError, match=named):
            compiler.compile_lark(f'start: "a" {written}\n')


def test_json_schemas_inside_rules(llama3):
    """`%json {...}`: the schema's documents (schema order, as compile_json_schema; whitespace
    flexible between tokens, as llguidance's %json, unless x-guidance says otherwise) where the
    rule has it; ignored whitespace around it as around any terminal."""
    schema = '{"type": "object", "properties": {"x": {"type": "integer", "minimum": 0}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["x"], "additionalProperties": false%s}'
    rules = 'start: NAME "(" %%json %s ")" (";" start)?\nNAME: /[a-z]+/\n%%ignore " "\n'
    grammar = Compiler(llama3).compile_lark(rules % (schema % ""))
    assert grammar.accepts('f({"x":1})') and grammar.accepts('f ( {"x":0,"tags":["a"]} ) ; g({"x":2})')
    assert grammar.accepts('f({"x": 1, "tags": [ "a" ]})') and grammar.accepts('f({\n  "x": 1\n})')
    for bad in ['f({"x":-1})', 'f({"x":"a"})', 'f({})', 'f({"x":1,"y":2})', 'f({"x": 1 ,, })']:
        assert not grammar.accepts(bad), bad
    compact = Compiler(llama3).compile_lark(rules % (schema % ', "x-guidance": {"whitespace_flexible": false}'))
    assert compact.accepts('f({"x":1})') and not compact.accepts('f({"x": 1})')
    with pytest.raises(UnsupportedGrammarError, match="x-guidance option 'key_separator'"):
        Compiler(llama3).compile_lark(rules % (schema % ', "x-guidance": {"key_separator": ": "}'))
    m = Matcher(grammar)
    assert m.accept_tokens([llama3.token_bytes.index(b) for b in (b"f", b"(", b'{"', b"x", b'":', b"3", b"})")]) == 7
    assert m.is_accepting()
    with pytest.raises(UnsupportedGrammarError, match="uniqueItems"):
        Compiler(llama3).compile_lark('start: %json {"type": "array", "uniqueItems": true}')
    with pytest.raises(GrammarError, match="line 1"):
        Compiler(llama3).compile_lark('start: %json {"type": ')
