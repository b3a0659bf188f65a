"""Vocabulary: exact token bytes checked against the real tokenizers' own decoders.

The invariant under test: for any id sequence, the real tokenizer's decoded text
equals the concatenation of our token bytes. The one documented exception is the
first token of SentencePiece-style decoders, which drop its leading space; we
compare those through a prefix token, and separately pin down exactly what they drop.
"""

from __future__ import annotations

import json
import pickle
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from constrain.errors import TokenError, VocabularyError
from constrain.vocab import Vocabulary

BYTE_LEVEL_HF = ["llama3", "qwen", "dsv3"]
ALL_KEYS = ["llama3", "qwen", "dsv3", "jiutian", "sp", "tekken", "smol"]


def normal_ids(vocab: Vocabulary) -> list[int]:
    return [i for i in range(vocab.size) if i not in vocab.special_ids]


def random_sequences(vocab: Vocabulary, count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    pool = normal_ids(vocab)
    return [[rng.choice(pool) for _ in range(rng.randint(1, 12))] for _ in range(count)]


# --------------------------------------------------------------------------------------
# Decoding equals concatenated token bytes
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", BYTE_LEVEL_HF)
def test_byte_level_texts_decode_exactly(real: Any, key: str, sample_texts: list[str]) -> None:
    vocab, tokenizer = real.vocab(key), real.hf_tokenizer(key)
    for text in sample_texts:
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        ours = vocab.decode(ids)
        assert ours.decode("utf-8") == tokenizer.decode(ids, skip_special_tokens=False), (text, ids)
        assert not vocab.special_ids.intersection(ids), (text, ids)


@pytest.mark.parametrize("key", BYTE_LEVEL_HF)
def test_byte_level_random_ids_decode_exactly(real: Any, key: str) -> None:
    """Random ids give incomplete UTF-8; `tokenizers` decodes lossily like errors='replace'."""
    vocab, tokenizer = real.vocab(key), real.hf_tokenizer(key)
    invalid = 0
    for ids in random_sequences(vocab, 400, seed=7):
        ours = vocab.decode(ids)
        try:
            ours.decode("utf-8")
        except UnicodeDecodeError:
            invalid += 1
        assert ours.decode("utf-8", errors="replace") == tokenizer.decode(
            ids, skip_special_tokens=False
        ), ids
    assert invalid > 0  # the sample really exercised partial UTF-8 tokens


def test_byte_level_tokens_hold_raw_bytes(real: Any) -> None:
    """A Llama 3 token may be half of a UTF-8 character: we keep the raw byte."""
    vocab, tokenizer = real.vocab("llama3"), real.hf_tokenizer("llama3")
    half = tokenizer.token_to_id("Ã")  # GPT-2 alphabet char for byte 0xC3
    assert vocab.token_bytes[half] == b"\xc3"
    assert vocab.token_bytes[tokenizer.token_to_id("ĠHello")] == b" Hello"
    assert vocab.token_bytes[tokenizer.token_to_id("Ċ")] == b"\n"
    assert vocab.decode([half, tokenizer.token_to_id("©")]) == "é".encode()


def test_metaspace_texts_decode_exactly_after_a_prefix_token(
    real: Any, sample_texts: list[str]
) -> None:
    """JiuTian: Unigram + Metaspace decoder. A leading "a" token keeps the decoder from
    touching the first token we compare."""
    vocab, tokenizer = real.vocab("jiutian"), real.hf_tokenizer("jiutian")
    prefix = tokenizer.token_to_id("a")
    assert vocab.token_bytes[prefix] == b"a"
    for text in sample_texts:
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        expected = tokenizer.decode([prefix, *ids], skip_special_tokens=False)
        assert "a" + vocab.decode(ids).decode("utf-8") == expected, (text, ids)


def test_metaspace_decoder_drops_only_the_first_tokens_marks(
    real: Any, sample_texts: list[str]
) -> None:
    """Without a prefix, the decoder deletes every "▁" of the FIRST token and nothing else."""
    vocab, tokenizer = real.vocab("jiutian"), real.hf_tokenizer("jiutian")
    checked_strip = 0
    for text in sample_texts:
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        if not ids:
            continue
        first = vocab.token_bytes[ids[0]]
        checked_strip += first.startswith(b" ")
        expected = first.replace(b" ", b"") + vocab.decode(ids[1:])
        assert expected.decode("utf-8") == tokenizer.decode(ids, skip_special_tokens=False), (
            text,
            ids,
        )
    assert checked_strip > 100


def test_metaspace_random_ids_decode_exactly(real: Any) -> None:
    vocab, tokenizer = real.vocab("jiutian"), real.hf_tokenizer("jiutian")
    prefix = tokenizer.token_to_id("a")
    for ids in random_sequences(vocab, 300, seed=11):
        assert "a" + vocab.decode(ids).decode("utf-8") == tokenizer.decode([prefix, *ids])


def test_jiutian_byte_pieces_are_literal_text(real: Any) -> None:
    """JiuTian has "<0xNN>" pieces but no byte fallback: its decoder prints them literally."""
    vocab, tokenizer = real.vocab("jiutian"), real.hf_tokenizer("jiutian")
    piece = tokenizer.token_to_id("<0x0A>")
    assert piece is not None
    assert vocab.token_bytes[piece] == b"<0x0A>" == tokenizer.decode([piece]).encode()


def test_sentencepiece_texts_decode_exactly(real: Any, sample_texts: list[str]) -> None:
    """tokenizer.model.v1 with byte fallback, against SentencePiece's own decoder."""
    vocab, sp = real.vocab("sp"), real.sp_processor()
    prefix = sp.piece_to_id("a")
    saw_bytes = 0
    for text in sample_texts:
        ids = sp.encode(text)
        saw_bytes += any(sp.is_byte(i) for i in ids)
        ours = vocab.decode(ids).decode("utf-8")
        assert "a" + ours == sp.decode([prefix, *ids]), (text, ids)
        # Narrow account of the dummy prefix: SentencePiece drops exactly one leading space.
        assert (ours[1:] if ours.startswith(" ") else ours) == sp.decode(ids), (text, ids)
    assert saw_bytes > 50


def test_sentencepiece_byte_tokens_are_single_bytes(real: Any) -> None:
    vocab, sp = real.vocab("sp"), real.sp_processor()
    byte_ids = [i for i in range(sp.get_piece_size()) if sp.is_byte(i)]
    assert len(byte_ids) == 256
    for value, token_id in enumerate(byte_ids):
        assert vocab.token_bytes[token_id] == bytes([value])
    assert vocab.token_bytes[sp.piece_to_id("▁the")] == b" the"


def test_llama2_style_tokenizer_json_matches_sentencepiece(
    real: Any, sample_texts: list[str]
) -> None:
    """The Replace/ByteFallback/Fuse/Strip decoder path gives the same bytes as the .model path."""
    fast = real.sp_llama_fast()
    vocab = Vocabulary.from_pretrained(fast)
    assert vocab.token_bytes == real.vocab("sp").token_bytes
    assert vocab.special_ids == real.vocab("sp").special_ids
    sp = real.sp_processor()
    backend = fast.backend_tokenizer
    prefix = sp.piece_to_id("a")
    for text in sample_texts:
        ids = sp.encode(text)
        expected = backend.decode([prefix, *ids], skip_special_tokens=False)
        assert "a" + vocab.decode(ids).decode("utf-8") == expected, (text, ids)


def test_tekken_texts_and_random_ids_decode_exactly(real: Any, sample_texts: list[str]) -> None:
    vocab, oracle = real.vocab("tekken"), real.tekken_oracle()
    for text in sample_texts:
        ids = oracle.encode(text, add_special_tokens=False).ids
        assert vocab.decode(ids).decode("utf-8") == oracle.decode(ids, skip_special_tokens=False), (
            text
        )
        assert min(ids, default=1000) >= 1000
    for ids in random_sequences(vocab, 300, seed=5):
        expected = oracle.decode(ids, skip_special_tokens=False)
        assert vocab.decode(ids).decode("utf-8", errors="replace") == expected, ids


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


def test_gguf_texts_decode_like_transformers(real: Any, sample_texts: list[str]) -> None:
    vocab, tokenizer = real.vocab("smol"), real.smol_transformers()
    for text in sample_texts:
        ids = tokenizer.encode(text, add_special_tokens=False)
        expected = tokenizer.decode(
            ids, skip_special_tokens=False, clean_up_tokenization_spaces=False
        )
        assert vocab.decode(ids).decode("utf-8") == expected, (text, ids)
    backend = tokenizer.backend_tokenizer
    for ids in random_sequences(vocab, 300, seed=3):
        expected = backend.decode(ids, skip_special_tokens=False)
        assert vocab.decode(ids).decode("utf-8", errors="replace") == expected, ids


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


def test_every_vocab_has_eos_inside_specials(real: Any) -> None:
    for key in ALL_KEYS:
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


@pytest.mark.parametrize("key", BYTE_LEVEL_HF)
def test_tokenizers_object_equals_path(real: Any, key: str) -> None:
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


# --------------------------------------------------------------------------------------
# Fingerprint, immutability, API
# --------------------------------------------------------------------------------------


def test_fingerprint_stable_and_distinct(real: Any) -> None:
    again = Vocabulary.from_pretrained(real.hf_dir("llama3"))
    assert again is not real.vocab("llama3")
    assert again.fingerprint == real.vocab("llama3").fingerprint
    assert hash(again) == hash(real.vocab("llama3"))
    prints = {real.vocab(key).fingerprint for key in ALL_KEYS}
    assert len(prints) == len(ALL_KEYS)
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
