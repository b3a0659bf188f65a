"""Vocabulary.from_pretrained on each real source: what it reads, and what it reads from.

Sizes, special ids and eos ids are pinned per tokenizer (including the config files that
supply eos and logits width); then every kind of source must give the same Vocabulary:
directories, tokenizer.json paths, `tokenizers` and transformers objects, SentencePiece
models, GGUF files, renamed files (detected by content) and an existing Vocabulary.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from constrain.vocab import Vocabulary


# --------------------------------------------------------------------------------------
# Sizes, specials, eos
# --------------------------------------------------------------------------------------


def test_llama3_sizes_and_specials(real: Any) -> None:
    vocab = real.vocab("llama3")
    assert vocab.size == len(vocab) == vocab.logits_width == 128_256
    assert vocab.special_ids == frozenset(range(128_000, 128_256))
    assert vocab.token_id("<|start_header_id|>") in vocab.special_ids
    assert vocab.token_id("<think>") in vocab.special_ids  # an added, non-special token
    hello = vocab.token_id("Hello")
    assert hello is not None and hello not in vocab.special_ids
    assert vocab.token_bytes[hello] == b"Hello"


def test_qwen_sizes_and_specials(real: Any) -> None:
    vocab = real.vocab("qwen")
    assert vocab.size == 151_665
    assert vocab.special_ids == frozenset(range(151_643, 151_665))
    assert vocab.token_id("<tool_call>") in vocab.special_ids


def test_deepseek_v3_sizes_and_width(real: Any) -> None:
    vocab = real.vocab("dsv3")
    assert vocab.size == vocab.logits_width == 128_815
    assert vocab.special_ids == frozenset({0, 1, 2} | set(range(128_000, 128_815)))
    wide = Vocabulary.from_pretrained(real.hf_dir("dsv3"), logits_width=129_280)
    assert wide.logits_width == 129_280 and wide.size == 128_815
    assert wide.token_bytes == vocab.token_bytes


def test_smollm2_sizes_and_specials(real: Any) -> None:
    vocab = real.vocab("smol")
    assert vocab.size == vocab.logits_width == 49_152
    assert vocab.special_ids == frozenset(range(17))
    assert vocab.token_bytes[0] == b"<|endoftext|>"


def test_tekken_layout(real: Any) -> None:
    """id = 1000 + rank; the first 1000 ids are specials; ranks past 130,072 are cut."""
    vocab = real.vocab("tekken")
    assert vocab.size == vocab.logits_width == 131_072
    assert vocab.special_ids == frozenset(range(1000))
    assert [vocab.token_bytes[1000 + r] for r in (0, 65, 255)] == [b"\x00", b"A", b"\xff"]
    assert vocab.token_bytes[1000 + 1000] == b" `"  # rank 1000 in the file
    assert vocab.token_id("</s>") == 2 and vocab.token_id("[INST]") == 3
    assert vocab.token_bytes[999] == b"<SPECIAL_999>"
    assert vocab.eos_token_ids == {2}


@pytest.mark.parametrize("key", ["llama3", "qwen", "dsv3", "jiutian"])
def test_added_tokens_are_exactly_the_special_ids(real: Any, key: str) -> None:
    vocab, tokenizer = real.vocab(key), real.hf_tokenizer(key)
    added = tokenizer.get_added_tokens_decoder()
    assert set(added) == set(vocab.special_ids)
    for token_id, token in added.items():
        assert vocab.token_bytes[token_id] == token.content.encode()
        assert vocab.token_id(token.content) == token_id


def test_sentencepiece_and_gguf_specials_follow_piece_types(real: Any) -> None:
    sp = real.sp_processor()
    expected = {
        i
        for i in range(sp.get_piece_size())
        if sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i)
    }
    assert real.vocab("sp").special_ids == expected == {0, 1, 2}
    smol = real.smol_transformers()
    assert set(smol.added_tokens_decoder) == set(real.vocab("smol").special_ids)


def test_eos_ids(real: Any) -> None:
    llama = real.vocab("llama3")
    assert llama.token_id("<｜end▁of▁sentence｜>") in llama.eos_token_ids
    assert {llama.token_id("<|eot_id|>"), llama.token_id("<|eom_id|>")} <= llama.eos_token_ids
    qwen = real.vocab("qwen")
    assert {qwen.token_id("<|endoftext|>"), qwen.token_id("<|im_end|>")} == qwen.eos_token_ids
    assert real.vocab("dsv3").eos_token_ids == {1}
    smol = real.vocab("smol")
    assert smol.token_id("<|im_end|>") == 2 and smol.eos_token_ids == {0, 2}
    assert real.vocab("sp").eos_token_ids == {2}
    # JiuTian's tokenizer_config.json really names "<unk>" as eos; "</s>" is well-known.
    assert real.vocab("jiutian").eos_token_ids == {0, 2}


def test_explicit_eos_is_used_exactly(real: Any) -> None:
    vocab = Vocabulary.from_pretrained(real.hf_dir("qwen"), eos_token_ids=[151645])
    assert vocab.eos_token_ids == {151645}
    assert vocab != real.vocab("qwen")


def test_every_vocab_has_eos_inside_specials(real: Any, all_keys: list[str]) -> None:
    for key in all_keys:
        vocab = real.vocab(key)
        assert vocab.eos_token_ids and vocab.eos_token_ids <= vocab.special_ids, key


def test_generation_config_eos_and_config_width_are_read(real: Any, tmp_path: Path) -> None:
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(real.hf_dir("qwen") / name, tmp_path / name)
    (tmp_path / "generation_config.json").write_text(
        json.dumps({"eos_token_id": [151643, 151645, 151644]})
    )
    (tmp_path / "config.json").write_text(
        json.dumps({"vocab_size": 152_064, "eos_token_id": 151643})
    )
    vocab = Vocabulary.from_pretrained(tmp_path)
    assert vocab.eos_token_ids == {151643, 151644, 151645}
    assert vocab.logits_width == 152_064


# --------------------------------------------------------------------------------------
# Sources: objects, paths, content detection
# --------------------------------------------------------------------------------------


def test_tokenizers_object_equals_path(real: Any, byte_level_key: str) -> None:
    key = byte_level_key
    by_object = Vocabulary.from_pretrained(real.hf_tokenizer(key))
    assert by_object == real.vocab(key)
    assert Vocabulary.from_pretrained(real.hf_dir(key) / "tokenizer.json") == real.vocab(key)


def test_tokenizers_object_without_configs_still_has_bytes(real: Any) -> None:
    """Without tokenizer_config.json JiuTian's "<unk>" eos is unknown; bytes are the same."""
    by_object = Vocabulary.from_pretrained(real.hf_tokenizer("jiutian"))
    assert by_object.token_bytes == real.vocab("jiutian").token_bytes
    assert by_object.eos_token_ids == {2}


def test_transformers_objects(real: Any) -> None:
    smol = Vocabulary.from_pretrained(real.smol_transformers())
    assert smol == real.vocab("smol")  # GGUF path and transformers' reading agree
    transformers = pytest.importorskip("transformers")
    from transformers.models.gpt_sw3.tokenization_gpt_sw3 import GPTSw3Tokenizer

    slow = GPTSw3Tokenizer(
        vocab_file=str(real.mistral_file("tokenizer.model.v1")),
        eos_token="</s>", bos_token="<s>", unk_token="<unk>", pad_token="<unk>",
    )  # fmt: skip
    assert getattr(slow, "backend_tokenizer", None) is None and slow.sp_model is not None
    assert transformers is not None
    assert Vocabulary.from_pretrained(slow) == real.vocab("sp")
    assert Vocabulary.from_pretrained(real.sp_processor()) == real.vocab("sp")


def test_detection_by_content_not_extension(real: Any, tmp_path: Path) -> None:
    renamed = {
        "sp": tmp_path / "weights.bin",
        "tekken": tmp_path / "vocab.txt",
    }  # a GGUF without the extension: test_gguf_llama_model_matches_sentencepiece
    for key, target in renamed.items():
        target.symlink_to(real.source_path(key))
        assert Vocabulary.from_pretrained(str(target)) == real.vocab(key), key


def test_gguf_llama_model_matches_sentencepiece(real: Any, tmp_path: Path) -> None:
    """A GGUF with a SentencePiece ("llama") vocabulary, written by the real gguf writer."""
    gguf = pytest.importorskip("gguf")
    sp = real.sp_processor()

    def piece_type(i: int) -> int:
        checks = [(sp.is_unknown, 2), (sp.is_control, 3), (sp.is_unused, 5), (sp.is_byte, 6)]
        return next((kind for check, kind in checks if check(i)), 1)

    path = tmp_path / "sp-vocab.bin"  # no .gguf: found by its magic
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list([sp.id_to_piece(i) for i in range(sp.get_piece_size())])
    writer.add_token_types([piece_type(i) for i in range(sp.get_piece_size())])
    writer.add_eos_token_id(sp.eos_id())
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert Vocabulary.from_pretrained(path) == real.vocab("sp")


def test_vocabulary_source_is_copied_with_overrides(real: Any) -> None:
    vocab = real.vocab("qwen")
    assert Vocabulary.from_pretrained(vocab) == vocab
    wider = Vocabulary.from_pretrained(vocab, logits_width=152_064)
    assert wider.logits_width == 152_064 and wider != vocab
