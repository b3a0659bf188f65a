"""`pattern` beyond the regex parser: anchors inside the pattern and in top-level
alternatives, lookarounds and \\b, checked against Python's `re` (same semantics for these
constructs, given ECMA's ASCII classes and `$`) and jsonschema on random strings, in each
spelling a caller asks for (decoded, canonical JSON, quoted JSON keys)."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.errors import EmptyLanguageError, UnsupportedSchemaError
from constrain.grammar.json_schema.key_patterns import quoted_spellings
from constrain.grammar.json_schema.patterns import pattern_dfa
from constrain.grammar.json_schema.strings import _canonical

PATTERNS = [
    r"^(?!io\.)[a-z.]+$",
    r"^(?=.{2,4}$)[a-c]*",
    r"^a$|^bc",
    r"^(?!pattern$).*$",
    r"^(?!ab|cd)[a-d]{0,3}$",
    r"^(?=a)(?!ab)[a-c]+$",
    r"b|^a",
    r"(^a|b)c",
    r"(^$)|(^[a-c]{2}-[a-c]$)",
    r"^([^,]|$)",
    r"(?!io)[a-z]{2}$",
    r"\bio\b",
    r"\Bat",
    r"(?<!\\)\"",
    r"(?<=[\"/])t",
    r"^(?!\s)(?!.*\s$).+$",
    r"^(?=.*[A-Z])(?=.*[0-9]).{4,}$",
    r"^((?!ab).)*$",
    r"a^b",
    r"(?!$)",
]
CHARS = "abcdiopt.,-/ AZ0\"\\\n\x01é"


def python_pattern(pattern: str) -> str:
    """ECMA's `$` (end of input only) and `\\B` (true in "") in Python's re."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append("(?!\\b)" if pattern[i : i + 2] == "\\B" and not in_class else pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "$":
            c = r"\Z"
        out.append(c)
        i += 1
    return "".join(out)


_DFAS: dict = {}


def spellings(pattern: str):
    """The pattern's DFAs (decoded, canonical, quoted), or None where nothing matches."""
    if pattern not in _DFAS:
        try:
            _DFAS[pattern] = [pattern_dfa(pattern, "#", wrap) for wrap in (lambda n: n, _canonical, quoted_spellings)]
        except EmptyLanguageError:
            _DFAS[pattern] = None
    return _DFAS[pattern]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=CHARS, max_size=8))
def test_pattern_matches_like_re_search(pattern, text):
    want = re.search(python_pattern(pattern), text, re.ASCII) is not None
    if text.isascii() and "\n" not in text and not (text == "" and "\\B" in pattern):
        assert jsonschema.Draft202012Validator({"pattern": pattern}).is_valid(text) == want
    dfas = spellings(pattern)
    if dfas is None:
        assert not want, (pattern, text)
        return
    decoded, canonical, quoted = dfas
    spelled = json.dumps(text, ensure_ascii=False)
    assert decoded.accepts(text.encode("utf-8")) == want, (pattern, text)
    assert canonical.accepts(spelled[1:-1].encode("utf-8")) == want, (pattern, text)
    assert quoted.accepts(spelled.encode("utf-8")) == want, (pattern, text)
    assert quoted.accepts(json.dumps(text).encode("utf-8")) == want, (pattern, text)  # \u escapes


def test_unsupported_constructs_name_the_keyword():
    with pytest.raises(UnsupportedSchemaError, match="backreference"):
        pattern_dfa(r"(a)(?=\1)", "#/pattern")


def test_schemas_with_lookarounds_compile_and_judge_instances(llama3):
    """End to end: lookarounds in `pattern` and in `patternProperties` keys (quoted spellings),
    through the compiler and a matcher."""
    from constrain import Compiler, Matcher

    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "pattern": r"^([\da-z](?:(?!.*--)[\da-z-]*[\da-z])?)$"}},
        "patternProperties": {r"^(?!cx)c\w*$": {"type": "integer"}, r"\bid\b": {"type": "boolean"}},
        "additionalProperties": False,
    }
    grammar = Compiler(llama3).compile_json_schema(schema)
    cases = {
        '{"name":"a-b-c"}': True,
        '{"name":"a--b"}': False,
        '{"name":"-ab"}': False,
        '{"name":"ab","count":3}': True,
        '{"name":"ab","cxount":3}': False,
        '{"name":"ab","my id":true}': True,
        '{"name":"ab","myid":true}': False,
        '{"name":"ab","\\u0063ount":3}': True,
    }
    for text, valid in cases.items():
        assert jsonschema.Draft202012Validator(schema).is_valid(json.loads(text)) == valid, text
        assert grammar.accepts(text.encode()) == valid, text
    # Token by token (one byte each) through the matcher's masks: allowed exactly while the
    # text can still become a valid instance.
    matcher = Matcher(grammar)
    for b in b'{"name":"a-b","count":1}':
        token = llama3.token_id(bytes([b]))
        assert token in set(matcher.allowed_token_ids()), chr(b)
        assert matcher.accept_token(token)
    assert matcher.is_accepting()
    matcher = Matcher(grammar)
    assert matcher.accept_tokens([llama3.token_id(bytes([b])) for b in b'{"name":"a-']) == 11
    assert llama3.token_id(b"-") not in set(matcher.allowed_token_ids())  # "--" is refused


REGION_CASES = [
    ([r"^x-", r"^(?!pattern$).*$"], ["x-a", "name", "pattern"]),
    ([r"^/(html|css|js)/[^/\n\r]+$"], ["name", "/js/a"]),
    ([r"^a", r"b$", r"^ab$"], ["ab", "a", "zb", "c"]),
    ([r"^[a-c]{1,2}$"], ["a", "b", "c", "aa", "ab", "ac", "ba", "bb", "bc", "ca", "cb", "cc"]),  # all named
    ([r"^x"], ["x\ud800", "y"]),  # a lone surrogate: no JSON text spells it
    ([r"."], []),
]


@pytest.mark.parametrize(("patterns", "named"), REGION_CASES)
def test_pattern_regions_equal_the_refined_other_keys(patterns, named):
    """KeyPatterns works regions out over all strings once per set of patterns; each must be
    the language of refining the other keys themselves (canonical DFAs: equal arrays)."""
    from constrain.automata import ir
    from constrain.automata.algebra import difference, intersect
    from constrain.grammar.json_schema import containers
    from constrain.grammar.json_schema.key_patterns import KeyPatterns

    def parts_of(start):
        parts = [(start, ())]
        for i, p in enumerate(patterns):
            dfa = pattern_dfa(p, "#", quoted_spellings)
            refined = []
            for region, matched in parts:
                for op, now in ((intersect, matched + (i,)), (difference, matched)):
                    try:
                        refined.append((op(region, dfa), now))
                    except EmptyLanguageError:
                        pass
            parts = refined
        return parts

    def arrays(dfa):
        return dfa.byte_classes.tolist(), dfa.table.tolist(), dfa.accepting.tolist()

    keys = KeyPatterns({p: True for p in patterns}, "#")
    expected = parts_of(containers.other_keys(named).dfa)
    got = keys.regions(named)
    assert [(arrays(d), [patterns[i] for i in m]) for d, m in expected if m] == [(arrays(n.dfa), m) for n, m in got]
    rest = [d for d, m in expected if not m]
    if rest:
        assert arrays(keys.rest(named).dfa) == arrays(rest[0])
    else:
        assert keys.rest(named) is ir.NOTHING


@pytest.mark.parametrize("pattern", [r"^pkg:npm/.+@.+", r"\d+", r"(?=a)\w+", r"[\ud800-\udfff]|x", r"^$", r"é.\b", "\\\\\"", r"[\x00-\x1f]+"])
def test_a_pattern_alone_is_its_own_string_body(pattern):
    """An unbounded string body with a pattern is the pattern's DFA itself: its canonical
    spellings are canonical string bodies, so the product with "any body" changes nothing."""
    from constrain.automata import compile_ir
    from constrain.automata.algebra import intersect
    from constrain.grammar.json_schema.lexical import string_body
    from constrain.grammar.json_schema.strings import _build_body_dfa

    got = _build_body_dfa((0, None, (pattern,), (), (), ()), "#")
    expected = intersect(compile_ir(string_body(canonical=True)), pattern_dfa(pattern, "#", _canonical))
    assert got.n_states == expected.n_states
    assert (got.byte_classes == expected.byte_classes).all() and (got.table == expected.table).all()
    assert (got.accepting == expected.accepting).all()
