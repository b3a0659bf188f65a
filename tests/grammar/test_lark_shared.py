"""The Lark grammars of ../shared/data/lark-grammars (skipped where the folder is absent): every
grammar Lark itself loads compiles with us or raises UnsupportedGrammarError naming the
construct; a sample input that comes with one is accepted token by token."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from constrain import Compiler, LimitExceededError, Limits, Matcher, UnsupportedGrammarError

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
