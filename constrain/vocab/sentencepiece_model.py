"""SentencePiece model files (tokenizer.model) and processors -> exact token bytes.

Pieces use "▁" for space; BYTE pieces "<0xNN>" are one raw byte (byte fallback);
CONTROL, UNKNOWN, UNUSED and USER_DEFINED pieces are special ids. SentencePiece's
decoder drops the space of a text's first piece (dummy prefix); token bytes keep it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from constrain.errors import VocabularyError
from constrain.vocab.loaded import LoadedVocab
from constrain.vocab.metaspace import metaspace_bytes
from constrain.vocab.sp_proto import BYTE, NORMAL, piece_types


def load_sentencepiece_file(path: Path) -> LoadedVocab:
    """Load a serialized ModelProto; raises VocabularyError if it is not one."""
    try:
        import sentencepiece
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise VocabularyError(
            "reading SentencePiece models needs the `sentencepiece` package"
        ) from exc
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(path.read_bytes())
    except (RuntimeError, OSError, TypeError) as exc:
        raise VocabularyError(
            f"{path} is not a recognised tokenizer file: expected a tokenizer.json, a Tekken json, "
            f"a GGUF file or a SentencePiece model (the SentencePiece reader said: {exc})"
        ) from exc
    return load_processor(processor, path.name)


def load_processor(processor: Any, name: str) -> LoadedVocab:
    """Token bytes, special ids and eos of a loaded `sentencepiece.SentencePieceProcessor`."""
    size = processor.get_piece_size()
    types = piece_types(processor.serialized_model_proto())
    if len(types) != size:
        raise VocabularyError(
            f"{name}: model proto lists {len(types)} pieces, processor has {size}"
        )
    pieces = [processor.id_to_piece(i) for i in range(size)]
    token_bytes: list[bytes] = []
    specials: set[int] = set()
    for token_id, (piece, kind) in enumerate(zip(pieces, types, strict=True)):
        if kind == NORMAL:
            token_bytes.append(metaspace_bytes(piece, byte_fallback=False))
        elif kind == BYTE:
            token_bytes.append(metaspace_bytes(piece, byte_fallback=True))
        else:
            token_bytes.append(piece.encode("utf-8"))
            specials.add(token_id)
    eos = processor.eos_id()
    return LoadedVocab(
        name=name,
        token_bytes=token_bytes,
        special_ids=specials,
        eos_ids={eos} if eos >= 0 else set(),
    )
