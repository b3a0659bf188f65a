"""Brute-force oracle of specdec.word_echo: every earlier word start, checked byte by byte."""

from __future__ import annotations


def is_word(b: int) -> bool:
    return b >= 0x80 or chr(b).isalnum() and chr(b).isascii() or b == ord("_")


def word_echo_oracle(data: bytes, max_word: int = 32) -> int:
    end = len(data)
    s = end
    while s > 0 and is_word(data[s - 1]):
        s -= 1
    word = data[s:end]
    if not word or len(word) > max_word or s == 0:
        return -1
    for fold in (False, True):
        if fold and len(word) < 2:
            break
        key = word.lower() if fold else word
        for i in range(s - 1 - len(word), -1, -1):  # most recent first; ends before byte s - 1
            piece = data[i : i + len(word)]
            if (piece.lower() if fold else piece) == key and (i == 0 or not is_word(data[i - 1])):
                return i + len(word)
    return -1
