"""Vocabulary as a value: fingerprint, immutability, decode and lookup, and its errors.

Errors are checked by message, since the message is what a user sees: paths that do not
exist or hold no tokenizer, files that are not tokenizers, unsupported tokenizer models,
a missing eos, out-of-range eos ids or logits width, and bad constructor arguments.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from constrain.errors import TokenError, VocabularyError
from constrain.vocab import Vocabulary


# --------------------------------------------------------------------------------------
# Fingerprint, immutability, API
# --------------------------------------------------------------------------------------


def test_fingerprint_stable_and_distinct(real: Any, all_keys: list[str]) -> None:
    again = Vocabulary.from_pretrained(real.hf_dir("llama3"))
    assert again is not real.vocab("llama3")
    assert again.fingerprint == real.vocab("llama3").fingerprint
    assert hash(again) == hash(real.vocab("llama3"))
    prints = {real.vocab(key).fingerprint for key in all_keys}
    assert len(prints) == len(all_keys)
    wide = Vocabulary.from_pretrained(real.hf_dir("dsv3"), logits_width=129_280)
    assert wide.fingerprint != real.vocab("dsv3").fingerprint
    assert len(again.fingerprint) == 64 and int(again.fingerprint, 16) >= 0


def test_fingerprint_covers_every_field() -> None:
    base = Vocabulary([b"a", b"b", b"<eos>"], {2}, {2})
    variants = [
        Vocabulary([b"a", b"c", b"<eos>"], {2}, {2}),
        Vocabulary([b"ab", b"", b"<eos>"], {2}, {2}),
        Vocabulary([b"a", b"b", b"<eos>"], {1, 2}, {2}),
        Vocabulary([b"a", b"b", b"<eos>"], {2}, {1, 2}),
        Vocabulary([b"a", b"b", b"<eos>"], {1}, {2}),  # same counts, other ids
        Vocabulary([b"a", b"b", b"<eos>"], {2}, {1}),
        Vocabulary([b"a", b"b", b"<eos>"], {2}, {2}, logits_width=4),
    ]
    assert len({v.fingerprint for v in variants} | {base.fingerprint}) == 8
    assert (
        Vocabulary([b"a", b"b", b"<eos>"], [2], [2], name="other") == base
    )  # name is a label only


def test_immutable_hashable_picklable(real: Any) -> None:
    vocab = real.vocab("smol")
    with pytest.raises(AttributeError):
        vocab.size = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del vocab.name
    assert isinstance(vocab.token_bytes, tuple) and isinstance(vocab.special_ids, frozenset)
    assert {vocab: 1}[Vocabulary.from_pretrained(vocab)] == 1
    restored = pickle.loads(pickle.dumps(vocab))
    assert restored == vocab and restored.name == vocab.name


def test_decode_inputs_and_range_checks(real: Any) -> None:
    vocab = real.vocab("llama3")
    ids = [vocab.token_id("Hello"), vocab.token_id(" world")]
    assert vocab.decode(ids) == b"Hello world"
    assert vocab.decode(np.array(ids, dtype=np.int64)) == b"Hello world"
    assert vocab.decode([]) == b""
    assert vocab.decode([128009]) == b"<|eot_id|>"  # specials decode as their text
    for bad in ([128_256], [-1]):
        with pytest.raises(TokenError, match="outside vocabulary"):
            vocab.decode(bad)


def test_token_id_lookup() -> None:
    vocab = Vocabulary([b"x", b"<s>", b"x", b"", b"<s>"], {3, 4}, {4})
    assert vocab.token_id("x") == 0  # lowest of duplicate regular tokens
    assert vocab.token_id("<s>") == 4  # special content wins
    assert vocab.token_id(b"x") == 0
    assert vocab.token_id("") is None  # holes are not text
    assert vocab.token_id("nope") is None


# --------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------


def test_nonexistent_path(tmp_path: Path) -> None:
    with pytest.raises(VocabularyError, match="no such file or directory"):
        Vocabulary.from_pretrained(tmp_path / "missing" / "tokenizer.json")
    with pytest.raises(VocabularyError, match="Hugging Face Hub"):
        Vocabulary.from_pretrained("meta-llama/Llama-3.1-8B")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"this is just some text\n", "not a recognised tokenizer file"),
        (b"", "not a recognised tokenizer file"),
        (b'{"architectures": ["X"], "vocab_size": 5}', "neither a tokenizer.json"),
        (b"{not json", "does not parse"),
        (b"GGUF\x03\x00\x00\x00garbage", "GGUF"),
    ],
)
def test_files_that_are_not_tokenizers(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_bytes(content)
    with pytest.raises(VocabularyError, match=message):
        Vocabulary.from_pretrained(path)


def test_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(VocabularyError, match="holds no tokenizer"):
        Vocabulary.from_pretrained(tmp_path)


def test_unsupported_wordpiece(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, decoders
    from tokenizers.models import WordPiece

    tokenizer = Tokenizer(WordPiece({"[UNK]": 0, "hello": 1, "##s": 2}, unk_token="[UNK]"))
    tokenizer.decoder = decoders.WordPiece()
    with pytest.raises(VocabularyError, match=r"WordPiece.*supported: BPE or Unigram"):
        Vocabulary.from_pretrained(tokenizer)
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    with pytest.raises(VocabularyError, match="WordPiece"):
        Vocabulary.from_pretrained(tmp_path)


def test_unsupported_gguf_model(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    path = tmp_path / "bert.gguf"
    writer = gguf.GGUFWriter(str(path), "bert")
    writer.add_tokenizer_model("bert")
    writer.add_token_list(["[PAD]", "hello"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(VocabularyError, match="'bert' is not supported; supported: gpt2, llama"):
        Vocabulary.from_pretrained(path)


def test_unsupported_object() -> None:
    with pytest.raises(VocabularyError, match="cannot read a vocabulary from a int"):
        Vocabulary.from_pretrained(42)


def test_no_eos_found(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, decoders
    from tokenizers.models import BPE

    tokenizer = Tokenizer(BPE({"a": 0, "b": 1}, []))
    tokenizer.decoder = decoders.ByteLevel()
    with pytest.raises(VocabularyError, match=r"no end-of-sequence token.*eos_token_ids"):
        Vocabulary.from_pretrained(tokenizer)
    assert Vocabulary.from_pretrained(tokenizer, eos_token_ids=[1]).eos_token_ids == {1}


def test_bad_eos_and_width(real: Any) -> None:
    with pytest.raises(
        VocabularyError, match=r"eos_token_ids contains \[200000\], outside the 151665"
    ):
        Vocabulary.from_pretrained(real.hf_dir("qwen"), eos_token_ids=[200_000])
    with pytest.raises(VocabularyError, match="logits_width 1000 is smaller than its 151665"):
        Vocabulary.from_pretrained(real.hf_dir("qwen"), logits_width=1000)
    with pytest.raises(VocabularyError, match="eos_token_ids is empty"):
        Vocabulary.from_pretrained(real.hf_dir("qwen"), eos_token_ids=[])


def test_constructor_validation() -> None:
    with pytest.raises(VocabularyError, match="no tokens"):
        Vocabulary([], [], [])
    with pytest.raises(VocabularyError, match="special_ids contains"):
        Vocabulary([b"a"], [1], [0])
    with pytest.raises(VocabularyError, match="expected bytes"):
        Vocabulary(["a"], [], [0])  # type: ignore[list-item]
    with pytest.raises(VocabularyError, match="must be integers"):
        Vocabulary([b"a"], [0.5], [0])  # type: ignore[list-item]
    vocab = Vocabulary([bytearray(b"a"), memoryview(b"b")], [], [1])  # type: ignore[list-item]
    assert vocab.token_bytes == (b"a", b"b") and vocab.logits_width == 2
