"""The Lark grammars of ../shared/data/lark-grammars (skipped where the folder is absent): every
grammar Lark itself loads compiles with us or raises UnsupportedGrammarError naming the
construct; a sample input that comes with one is accepted token by token."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from constrain import Compiler, Matcher, UnsupportedGrammarError

ROOT = Path(__file__).resolve().parents[3] / "shared" / "data" / "lark-grammars"


def _rows() -> list:
    index = ROOT / "INDEX.tsv"
    if not index.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{index} not found"), id="missing")]
    with index.open() as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["kind"] == "grammar" and r["loads_in_lark_1.3.1_earley"] == "yes"]
    return [pytest.param(r, id=r["file"]) for r in rows]


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


@pytest.mark.parametrize("row", _rows())
def test_every_grammar_lark_loads_compiles_or_is_refused_by_name(row, compiler):
    path = ROOT / row["file"]
    try:
        grammar = compiler.compile_lark(path.read_text(), row["start_rule_used"] or "start", import_paths=[path.parent])
    except UnsupportedGrammarError as exc:
        assert exc.construct and exc.where
        return
    assert Matcher(grammar).allowed_token_ids().size


def test_the_composition_sample_is_accepted_token_by_token(compiler, tokenizer_files):
    folder = ROOT / "lark-parser" / "examples" / "composition"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    from tokenizers import Tokenizer

    grammar = compiler.compile_grammar_file(folder / "storage.lark")
    text = (folder / "combined_csv_and_json.txt").read_text()
    ids = Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json")).encode(text, add_special_tokens=False).ids
    m = Matcher(grammar)
    assert m.accept_tokens(ids) == len(ids) and m.is_accepting()
