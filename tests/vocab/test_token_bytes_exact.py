"""Vocabulary: exact token bytes checked against the real tokenizers' own decoders.

The invariant under test: for any id sequence, the real tokenizer's decoded text
equals the concatenation of our token bytes. The one documented exception is the
first token of SentencePiece-style decoders, which drop its leading space; we
compare those through a prefix token, and separately pin down exactly what they drop.
"""

from __future__ import annotations

import random
from typing import Any

from constrain.vocab import Vocabulary


def normal_ids(vocab: Vocabulary) -> list[int]:
    return [i for i in range(vocab.size) if i not in vocab.special_ids]


def random_sequences(vocab: Vocabulary, count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    pool = normal_ids(vocab)
    return [[rng.choice(pool) for _ in range(rng.randint(1, 12))] for _ in range(count)]


def test_byte_level_texts_decode_exactly(
    real: Any, byte_level_key: str, sample_texts: list[str]
) -> None:
    vocab, tokenizer = real.vocab(byte_level_key), real.hf_tokenizer(byte_level_key)
    for text in sample_texts:
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        ours = vocab.decode(ids)
        assert ours.decode("utf-8") == tokenizer.decode(ids, skip_special_tokens=False), (text, ids)
        assert not vocab.special_ids.intersection(ids), (text, ids)


def test_byte_level_random_ids_decode_exactly(real: Any, byte_level_key: str) -> None:
    """Random ids give incomplete UTF-8; `tokenizers` decodes lossily like errors='replace'."""
    vocab, tokenizer = real.vocab(byte_level_key), real.hf_tokenizer(byte_level_key)
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
