"""How special tokens are spelled for the automata: bytes that no text contains.

A grammar may ask for a special token by name or id (Lark's `<|eot_id|>`, `<[128009]>`). Automata
read bytes, so each special token id gets a *virtual spelling*: 0xFF then the id in three bytes.
Text is UTF-8 and UTF-8 never holds a byte from 0xF5 up, so no grammar over characters reads a
virtual spelling, and no token whose bytes hold such a byte (a lone byte-fallback token) can be
allowed by one: those tokens leave the trie, and the special tokens join it under their
virtual spellings. A mask then allows a special token exactly where the grammar reads its
spelling, and accepting it steps over that spelling.
"""

from __future__ import annotations

from typing import Iterable, Sequence

MARK = 0xFF
MAX_ID = 1 << 24


def virtual_bytes(token_id: int) -> bytes:
    """The virtual spelling of special token `token_id`."""
    if not 0 <= token_id < MAX_ID:
        raise ValueError(f"special token id {token_id} is out of range (0..{MAX_ID - 1})")
    return bytes([MARK]) + token_id.to_bytes(3, "big")


def trie_token_bytes(token_bytes: Sequence[bytes], special_ids: Iterable[int]) -> list[bytes]:
    """Per token what the trie holds: special tokens their virtual spelling, tokens with a
    byte UTF-8 never holds nothing (b"": left out), the others their bytes."""
    out = [b"" if any(b >= 0xF5 for b in data) else data for data in token_bytes]
    for tid in special_ids:
        out[tid] = virtual_bytes(tid)
    return out
