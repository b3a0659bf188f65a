"""Where the word being written was written before: the prompt lookup's fallback at a value's start.

A suffix match needs a few bytes in common with earlier text, and a value copied from the prompt
starts right after bytes the prompt never held (`"name":"G` for "Grace Hopper, 85"): the
longest earlier suffix is too short until the second pass. The partial word at the end of the
context (its bytes since the last non-word byte) is looked up instead at earlier *word starts*:
most recent occurrence first, then, for words of two or more bytes, ignoring ASCII case (a model
capitalizes "Mathematician" where the prompt wrote "mathematician"; the draft then continues with
the prompt's bytes, which the verifier keeps as far as they agree).
"""

from __future__ import annotations

MAX_WORD = 32  # bytes of a partial word looked up (a longer one is prose the suffix match serves)
MIN_CASELESS = 2  # a caseless match of one letter is chance


def _word_bytes() -> bytes:
    table = bytearray(256)
    for b in range(256):
        table[b] = 1 if (chr(b).isascii() and (chr(b).isalnum() or chr(b) == "_")) or b >= 0x80 else 0
    return bytes(table)


IS_WORD = _word_bytes()  # ASCII letters, digits, "_", and every byte of a multibyte UTF-8 character


def word_echo(data: bytes | bytearray, max_word: int = MAX_WORD) -> int:
    """Where the bytes after the most recent earlier occurrence of the context's partial word
    start, the occurrence at a word start (after a non-word byte, or at 0); -1 if the context
    does not end in a partial word of 1..max_word bytes that follows a non-word byte, or no
    earlier word starts with it."""
    end = len(data)
    s = end
    while s > 0 and IS_WORD[data[s - 1]]:
        s -= 1
        if end - s > max_word:
            return -1
    if s == end or s == 0:
        return -1
    word = bytes(data[s:end])
    before = bytes(data[: s - 1])  # (an occurrence ends before the non-word byte at s - 1)
    at = _at_word_start(before, word)
    if at < 0 and len(word) >= MIN_CASELESS:
        at = _at_word_start(before.lower(), word.lower())
    return -1 if at < 0 else at + len(word)


def _at_word_start(text: bytes, word: bytes) -> int:
    """The most recent index of `word` in `text` that starts a word (or -1)."""
    hi = len(text)
    while True:
        at = text.rfind(word, 0, hi)
        if at < 0 or at == 0 or not IS_WORD[text[at - 1]]:
            return at
        hi = at + len(word) - 1
