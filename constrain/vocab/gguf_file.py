"""GGUF files (llama.cpp) -> exact token bytes, from the metadata only.

The header is read by gguf_metadata.py (tensors are never read). The tokenizer
model says how token strings map to bytes: "gpt2" is byte-level BPE, "llama" is
SentencePiece-style ("▁" space, BYTE-typed "<0xNN>" tokens). Token types
unknown/control/user-defined/unused are special ids.
"""

from __future__ import annotations

from pathlib import Path

from constrain.errors import VocabularyError
from constrain.vocab.byte_level import byte_level_bytes
from constrain.vocab.gguf_metadata import read_gguf_metadata
from constrain.vocab.loaded import LoadedVocab
from constrain.vocab.metaspace import metaspace_bytes

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SUPPORTED_MODELS = ("gpt2", "llama")
_EOS_KEYS = (
    "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.eot_token_id",
    "tokenizer.ggml.eom_token_id",
)


def load_gguf(path: Path) -> LoadedVocab:
    """Token bytes, special ids, eos ids and logits width from a GGUF file's metadata."""
    fields = read_gguf_metadata(
        path, lambda key: key.startswith("tokenizer.ggml.") or key.startswith("general.") or key.endswith(".vocab_size")
    )
    value = fields.get

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

