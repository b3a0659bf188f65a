"""GPT-2 byte-level alphabet: token strings whose every char stands for one raw byte.

Byte-level BPE (GPT-2, Llama 3, Qwen, DeepSeek, SmolLM2) stores each byte as a
printable char ("Ġ" = space, "Ċ" = newline, ...), so tokens may hold incomplete
UTF-8 sequences. We map the chars back to the exact raw bytes, with one
`str.translate` per token (fast enough for 150k-token vocabularies).
"""

from __future__ import annotations

from collections.abc import Iterable


def bytes_to_unicode() -> dict[int, str]:
    """The GPT-2 table byte value -> printable char (identical to openai/gpt-2 encoder.py)."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    codes = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return {byte: chr(code) for byte, code in zip(printable, codes, strict=True)}


BYTE_TO_CHAR: dict[int, str] = bytes_to_unicode()

# char -> the latin-1 char of its byte. Code points below 256 that are NOT in the
# alphabet (space, newline, soft hyphen, ...) map to a sentinel above U+00FF so that
# the latin-1 encode below fails for them, like a char outside the alphabet does.
_SENTINEL = "\U0010ffff"
_TABLE: dict[int, str] = {cp: _SENTINEL for cp in range(256)}
_TABLE.update({ord(char): chr(byte) for byte, char in BYTE_TO_CHAR.items()})


def byte_level_bytes(token: str) -> bytes:
    """Raw bytes of one byte-level token string.

    Mirrors the `tokenizers` ByteLevel decoder exactly: if any char is outside the
    alphabet, the whole token is taken verbatim as UTF-8 (this happens for added
    tokens such as "<｜end▁of▁sentence｜>").
    """
    try:
        return token.translate(_TABLE).encode("latin-1")
    except UnicodeEncodeError:
        return token.encode("utf-8")


def is_byte_level(token: str) -> bool:
    """True when every char of `token` belongs to the byte-level alphabet."""
    try:
        token.translate(_TABLE).encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def byte_level_all(tokens: Iterable[str]) -> list[bytes]:
    """`byte_level_bytes` over many tokens, in order."""
    return [byte_level_bytes(token) for token in tokens]
