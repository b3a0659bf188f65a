"""The Lark grammars of ../shared/data/lark-grammars (skipped where the folder is absent): every
grammar Lark itself loads compiles with us or raises UnsupportedGrammarError naming the
construct (or GrammarError where it accepts no document: ACCEPTS_NOTHING); a sample input that
comes with one is accepted token by token."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from constrain import Compiler, GrammarError, LimitExceededError, Limits, Matcher, UnsupportedGrammarError

from token_choices import short_or_all, text_ids  # tests/support

ROOT = Path(__file__).resolve().parents[3] / "shared" / "data" / "lark-grammars"


def _rows() -> list:
    index = ROOT / "INDEX.tsv"
    if not index.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{index} not found"), id="missing")]
    with index.open() as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["kind"] == "grammar" and r["loads_in_lark_1.3.1_earley"] == "yes"]
    return [pytest.param(r, id=r["file"]) for r in rows]


WALK_STEPS = 6
# Grammars that accept no document under Lark's default Earley lexer (a terminal's longest
# match), which raise GrammarError naming the terminal: mdoc.lark's `".Dt" PROGNAME SECTION`
# (two names with nothing between them; Lark parses such a text with lexer="dynamic_complete" only).
ACCEPTS_NOTHING = {"ligurio-lark-grammars/lark_grammars/grammars/mdoc.lark": "PROGNAME"}


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3, limits=Limits(max_mask_seconds=2.0))


@pytest.mark.parametrize("row", _rows())
def test_every_grammar_lark_loads_compiles_or_is_refused_by_name(row, compiler, llama3):
    """...and masks along a short random walk either come or raise LimitExceededError (an
    ambiguous grammar's stacks, the time for one mask): nothing else escapes."""
    path = ROOT / row["file"]
    try:
        grammar = compiler.compile_lark(path.read_text(), row["start_rule_used"] or "start", import_paths=[path.parent])
    except UnsupportedGrammarError as exc:
        assert exc.construct and exc.where
        return
    except GrammarError as exc:
        if row["file"] not in ACCEPTS_NOTHING:
            raise
        assert "accepts no document at all" in str(exc) and ACCEPTS_NOTHING[row["file"]] in str(exc)
        return
    assert row["file"] not in ACCEPTS_NOTHING
    m = Matcher(grammar)
    rng = random.Random(row["file"])
    eos = llama3.eos_token_ids
    for _ in range(WALK_STEPS):
        try:
            allowed = text_ids(m.allowed_token_ids(), llama3, eos)
        except LimitExceededError as exc:
            assert exc.what and exc.knob  # (what was exceeded, and how to raise it)
            return
        if not allowed.size:
            break
        short = short_or_all(allowed, llama3, 3)
        assert m.accept_token(int(rng.choice(short)))


def _accepted_token_by_token(grammar, text: str, tokenizer_files) -> bool:
    from tokenizers import Tokenizer

    ids = Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json")).encode(text, add_special_tokens=False).ids
    m = Matcher(grammar)
    return m.accept_tokens(ids) == len(ids) and m.is_accepting()


def test_the_composition_sample_is_accepted_token_by_token(compiler, tokenizer_files):
    folder = ROOT / "lark-parser" / "examples" / "composition"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    grammar = compiler.compile_grammar_file(folder / "storage.lark")
    assert _accepted_token_by_token(grammar, (folder / "combined_csv_and_json.txt").read_text(), tokenizer_files)


def test_llguidance_rfc_sample_is_accepted_token_by_token(compiler, tokenizer_files):
    """llguidance's own sample grammar, which Lark refuses: `""` in rules, a terminal that
    matches the empty text (`TEXT: (...)*`), both read as llguidance reads them."""
    folder = ROOT / "llguidance" / "sample_parser" / "data"
    if not (folder / "rfc.lark").is_file():
        pytest.skip(f"{folder / 'rfc.lark'} not found")
    grammar = compiler.compile_grammar_file(folder / "rfc.lark")
    text = (folder / "rfc.xml").read_text()
    assert _accepted_token_by_token(grammar, text, tokenizer_files)
    assert not grammar.accepts(text.replace("</rfc>", "</rf>").encode())


def test_lua_s_readings_stay_merged_where_they_multiplied(llama3):
    """lua.lark is ambiguous without end (`exp: exp binop exp`, nullable table constructors):
    kept apart, its readings of this text (a random walk's) pass max_stacks (6,366 stacks with
    one top after `It`); merged (stack_semantics.py) they are a few stacks. (Masks over merged
    stacks are checked against the oracles in tests/index/test_stack_index.py: a new position of
    lua.lark's takes seconds, see docs/lark.md.)"""
    path = ROOT / "ligurio-lark-grammars" / "lark_grammars" / "grammars" / "lua.lark"
    if not path.exists():
        pytest.skip(f"{path} not found")
    grammar = Compiler(llama3).compile_lark(path.read_text())
    text = b"fit hs352 TNleaAST+NGresupRnd mlfol It+#% MB CIys[fPI DT-NoCLERK"
    m = Matcher(grammar)
    for k, byte in enumerate(text):
        assert m.accept_token(llama3.token_bytes.index(bytes([byte]))), text[: k + 1]
        assert len(m.state) <= 4, text[: k + 1]
    apart = Compiler(llama3).compile_lark(path.read_text() + "\n")
    apart.automaton.semantics.merge = False
    with pytest.raises(LimitExceededError, match="max_stacks"):
        apart.automaton.advance(apart.automaton.initial_state(), text)
