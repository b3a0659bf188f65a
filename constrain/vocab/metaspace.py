"""SentencePiece-style pieces: "▁" is a space, "<0xNN>" pieces may stand for one raw byte.

Decoders of this family (SentencePiece itself, the `tokenizers` Metaspace decoder,
Llama-2 style Replace/ByteFallback/Fuse/Strip sequences, GGUF "llama" vocabularies)
drop the space of the FIRST token of a decoded text (dummy prefix / prepend scheme;
the `tokenizers` Metaspace decoder even drops every "▁" of the first token).
Token bytes here keep that space: they are what the token contributes mid-sequence,
which is what a grammar must match.
"""

from __future__ import annotations

import re

SPACE_MARK = "▁"  # U+2581 LOWER ONE EIGHTH BLOCK

# What `tokenizers`' ByteFallback decoder accepts: exactly "<0x" + two hex digits + ">".
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def byte_piece_value(piece: str) -> int | None:
    """The byte a "<0xNN>" piece stands for, or None when `piece` is not one."""
    match = _BYTE_PIECE.fullmatch(piece)
    return int(match.group(1), 16) if match else None


def metaspace_bytes(piece: str, *, byte_fallback: bool, replacement: str = SPACE_MARK) -> bytes:
    """Exact bytes of one SentencePiece-style piece, mid-sequence.

    With `byte_fallback` a "<0xNN>" piece is the single byte NN (possibly an
    incomplete UTF-8 sequence); without it the piece is literal text, as the
    decoder outputs it.
    """
    if byte_fallback:
        value = byte_piece_value(piece)
        if value is not None:
            return bytes((value,))
    return piece.replace(replacement, " ").encode("utf-8")
