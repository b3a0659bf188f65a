"""GGUF files (llama.cpp) -> exact token bytes, from the metadata only.

`gguf.GGUFReader` memory-maps the file, so tensors are never read. The tokenizer
model says how token strings map to bytes: "gpt2" is byte-level BPE, "llama" is
SentencePiece-style ("▁" space, BYTE-typed "<0xNN>" tokens). Token types
unknown/control/user-defined/unused are special ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from constrain.errors import VocabularyError
from constrain.vocab.byte_level import byte_level_bytes
from constrain.vocab.loaded import LoadedVocab
from constrain.vocab.metaspace import metaspace_bytes

MAGIC = b"GGUF"
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SUPPORTED_MODELS = ("gpt2", "llama")
_EOS_KEYS = (
    "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.eot_token_id",
    "tokenizer.ggml.eom_token_id",
)


def load_gguf(path: Path) -> LoadedVocab:
    """Token bytes, special ids, eos ids and logits width from a GGUF file's metadata."""
    try:
        from gguf import GGUFReader
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise VocabularyError("reading GGUF files needs the `gguf` package") from exc
    try:
        fields = GGUFReader(path, "r").fields
    except (ValueError, OSError, IndexError) as exc:
        raise VocabularyError(f"{path}: unreadable GGUF file: {exc}") from exc

    def value(key: str) -> Any:
        field = fields.get(key)
        return None if field is None else _contents(field)

    model = value("tokenizer.ggml.model")
    tokens = value("tokenizer.ggml.tokens")
    if model is None or tokens is None:
        raise VocabularyError(
            f"{path}: GGUF file has no tokenizer metadata (tokenizer.ggml.model/tokens)"
        )
    if model not in SUPPORTED_MODELS:
        raise VocabularyError(
            f"{path}: GGUF tokenizer model {model!r} is not supported; "
            f"supported: {', '.join(SUPPORTED_MODELS)}"
        )
    types = value("tokenizer.ggml.token_type") or [NORMAL] * len(tokens)
    if len(types) != len(tokens):
        raise VocabularyError(f"{path}: {len(tokens)} tokens but {len(types)} token types")

    token_bytes: list[bytes] = []
    specials: set[int] = set()
    for token_id, (text, kind) in enumerate(zip(tokens, types, strict=True)):
        if kind in (UNKNOWN, CONTROL, USER_DEFINED, UNUSED):
            token_bytes.append(text.encode("utf-8"))
            specials.add(token_id)
        elif model == "gpt2":
            token_bytes.append(byte_level_bytes(text))
        else:
            token_bytes.append(metaspace_bytes(text, byte_fallback=kind == BYTE))

    eos = {int(v) for v in (value(key) for key in _EOS_KEYS) if v is not None}
    arch = value("general.architecture")
    width = value(f"{arch}.vocab_size") if arch else None
    return LoadedVocab(
        name=path.name,
        token_bytes=token_bytes,
        special_ids=specials,
        eos_ids=eos,
        logits_width=int(width) if width is not None else None,
    )


def _contents(field: Any) -> Any:
    """A metadata value as Python data (`ReaderField.contents` exists from gguf 0.11 on)."""
    if hasattr(field, "contents"):
        return field.contents()
    from gguf import GGUFValueType

    def one(index: int, kind: Any) -> Any:
        part = field.parts[index]
        return bytes(part).decode("utf-8") if kind == GGUFValueType.STRING else part.tolist()[0]

    if field.types[0] == GGUFValueType.ARRAY:
        return [one(index, field.types[-1]) for index in field.data]
    return one(field.data[0], field.types[0])
