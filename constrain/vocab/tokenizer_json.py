"""tokenizer.json (Hugging Face `tokenizers`) -> exact token bytes.

The bytes a token contributes are defined by the file's decoder, so we interpret
the decoder, per token: ByteLevel (GPT-2 alphabet), Metaspace, and Llama-2 style
Sequence[Replace("▁"->" "), ByteFallback, Fuse, Strip]. Steps after Fuse act on
the whole decoded text and only strip its first/last chars (the leading-space
strip), so they do not change what a token contributes mid-sequence.
Every added token (special or not) is a special id: grammars never emit them.
"""

from __future__ import annotations

from typing import Any

from constrain.errors import VocabularyError
from constrain.vocab.byte_level import byte_level_all
from constrain.vocab.loaded import LoadedVocab, from_entries
from constrain.vocab.metaspace import byte_piece_value

SUPPORTED = (
    "BPE or Unigram models with a ByteLevel, Metaspace or Replace/ByteFallback/Fuse/Strip decoder"
)

# ("replace", old, new, 0, 0) or ("strip", char, "", start, stop), applied to each token.
Step = tuple[str, str, str, int, int]


def is_tokenizer_json(data: Any) -> bool:
    """A tokenizer.json has a "model" object and a "decoder" key (possibly null)."""
    return isinstance(data, dict) and isinstance(data.get("model"), dict) and "decoder" in data


def load_tokenizer_json(data: dict[str, Any], name: str) -> LoadedVocab:
    """Token bytes and special ids of a parsed tokenizer.json."""
    model = data["model"]
    pieces = _model_pieces(model, name)
    steps, byte_level, decoder_bytes = _decoder_steps(data.get("decoder"), name)
    byte_fallback = decoder_bytes or bool(model.get("byte_fallback"))

    ids = list(pieces)
    texts = [pieces[i] for i in ids]
    byte_ids: dict[int, bytes] = {}
    if byte_fallback:
        for token_id, text in zip(ids, texts, strict=True):
            value = byte_piece_value(text)
            if value is not None:
                byte_ids[token_id] = bytes((value,))
    for step in steps:
        texts = _apply(step, texts)
    encoded = byte_level_all(texts) if byte_level else [t.encode("utf-8") for t in texts]
    entries = dict(zip(ids, encoded, strict=True))
    entries.update(byte_ids)

    added = data.get("added_tokens") or []
    specials: set[int] = set()
    for token in added:
        token_id, content = token.get("id"), token.get("content")
        if not isinstance(token_id, int) or not isinstance(content, str):
            raise VocabularyError(f"{name}: malformed added token {token!r}")
        entries[token_id] = content.encode("utf-8")
        specials.add(token_id)
    return from_entries(name, entries, specials)


def piece_ids(data: dict[str, Any]) -> dict[str, int]:
    """Raw token string -> id (added tokens by content, winning over model pieces)."""
    found = {piece: i for i, piece in _model_pieces(data["model"], "tokenizer.json").items()}
    for token in data.get("added_tokens") or []:
        if isinstance(token.get("content"), str) and isinstance(token.get("id"), int):
            found[token["content"]] = token["id"]
    return found


def _model_pieces(model: dict[str, Any], name: str) -> dict[int, str]:
    kind = model.get("type")
    vocab = model.get("vocab")
    if kind is None:  # files written by old `tokenizers` versions omit the type
        kind = "Unigram" if isinstance(vocab, list) else "BPE" if "merges" in model else "unknown"
    if kind == "BPE" and isinstance(vocab, dict):
        return {i: piece for piece, i in vocab.items()}
    if kind == "Unigram" and isinstance(vocab, list):
        return {i: entry[0] for i, entry in enumerate(vocab)}
    raise VocabularyError(
        f"{name}: tokenizer model type {kind!r} is not supported; supported: {SUPPORTED}"
    )


def _decoder_steps(decoder: Any, name: str) -> tuple[list[Step], bool, bool]:
    """Flatten the decoder into per-token string steps.

    Returns (steps, ends in byte-level mapping, has ByteFallback).
    """
    if decoder is None:
        raise VocabularyError(
            f"{name}: tokenizer.json has no decoder (tokens would be joined with spaces); "
            f"supported: {SUPPORTED}"
        )
    flat = decoder.get("decoders", []) if decoder.get("type") == "Sequence" else [decoder]
    steps: list[Step] = []
    byte_level = byte_fallback = fused = False
    for step in flat:
        kind = step.get("type")
        if kind == "Fuse":
            fused = True
        elif kind == "ByteFallback":
            byte_fallback = True
        elif kind == "ByteLevel":
            byte_level = True
        elif byte_level and kind not in ("Strip",):
            raise VocabularyError(f"{name}: decoder step {kind!r} after ByteLevel is not supported")
        elif kind == "Metaspace":
            steps.append(("replace", step.get("replacement", "▁"), " ", 0, 0))
        elif kind == "Replace":
            pattern = step.get("pattern", {})
            if "String" not in pattern:
                raise VocabularyError(
                    f"{name}: regex Replace decoders are not supported ({pattern!r})"
                )
            steps.append(("replace", pattern["String"], step.get("content", ""), 0, 0))
        elif kind == "Strip":
            if not fused:  # before Fuse it strips every token; after, only the text's edges
                char, start, stop = (
                    step.get("content", " "),
                    step.get("start", 0),
                    step.get("stop", 0),
                )
                steps.append(("strip", char, "", int(start), int(stop)))
        else:
            raise VocabularyError(
                f"{name}: decoder type {kind!r} is not supported; supported: {SUPPORTED}"
            )
    return steps, byte_level, byte_fallback


def _apply(step: Step, texts: list[str]) -> list[str]:
    kind, first, second, start, stop = step
    if kind == "replace":
        return [t.replace(first, second) for t in texts]
    return [_strip(t, first, start, stop) for t in texts]


def _strip(text: str, char: str, start: int, stop: int) -> str:
    """`tokenizers` Strip: drop up to `start` leading and `stop` trailing `char`s."""
    head = 0
    while head < start and head < len(text) and text[head] == char:
        head += 1
    tail = len(text)
    while len(text) - tail < stop and tail > head and text[tail - 1] == char:
        tail -= 1
    return text[head:tail]
