"""Read piece types from a serialized SentencePiece ModelProto without protobuf.

The `sentencepiece` Python API reports control/unknown/unused/byte pieces but not
USER_DEFINED ones, which must also never be grammar text. The wire format we
need is tiny: ModelProto field 1 is `repeated SentencePiece pieces`, and in each
piece field 3 is the `type` enum (default NORMAL), so a 40-line scan beats adding
a protobuf dependency.
"""

from __future__ import annotations

from constrain.errors import VocabularyError

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def piece_types(proto: bytes) -> list[int]:
    """Type of every piece, in id order."""
    types: list[int] = []
    pos, end = 0, len(proto)
    while pos < end:
        field, wire, pos = _key(proto, pos)
        if field == 1 and wire == 2:
            length, pos = _varint(proto, pos)
            types.append(_piece_type(proto, pos, pos + length))
            pos += length
        else:
            pos = _skip(proto, pos, wire)
    if pos != end:
        raise VocabularyError("SentencePiece model: truncated protobuf")
    return types


def _piece_type(buf: bytes, pos: int, end: int) -> int:
    kind = NORMAL
    while pos < end:
        field, wire, pos = _key(buf, pos)
        if field == 3 and wire == 0:
            kind, pos = _varint(buf, pos)
        else:
            pos = _skip(buf, pos, wire)
    return kind


def _key(buf: bytes, pos: int) -> tuple[int, int, int]:
    key, pos = _varint(buf, pos)
    return key >> 3, key & 7, pos


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise VocabularyError("SentencePiece model: truncated protobuf varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _skip(buf: bytes, pos: int, wire: int) -> int:
    if wire == 0:
        return _varint(buf, pos)[1]
    if wire == 1:
        return pos + 8
    if wire == 2:
        length, pos = _varint(buf, pos)
        return pos + length
    if wire == 5:
        return pos + 4
    raise VocabularyError(f"SentencePiece model: unexpected protobuf wire type {wire}")
