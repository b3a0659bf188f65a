"""Brute-force oracles of the prompt lookup drafter (specdec/text_lookup.py) and its word-start
fallback (specdec/word_echo.py): every earlier occurrence checked byte by byte."""

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


def spell(vocab, tokens) -> bytes:
    return b"".join(vocab.token_bytes[t] for t in tokens)


def echo_oracle(data: bytes, min_match: int, max_match: int, min_punctuation: int = 1, word_starts: bool = False) -> int:
    """Where the bytes after the most recent earlier occurrence of the longest matching suffix
    start (an occurrence must end before the end of `data`); a suffix of punctuation alone counts
    from min_punctuation bytes; without one, with word_starts, the word-start echo; or -1."""
    end = len(data)
    for n in range(min(max_match, end - 1), min_match - 1, -1):
        suffix = data[end - n :]
        if n < min_punctuation and not any(is_word(b) for b in suffix):
            break
        for i in range(end - n - 1, -1, -1):  # most recent first; ends at i + n <= end - 1
            if data[i : i + n] == suffix:
                return i + n
    return word_echo_oracle(data) if word_starts else -1


def utf8_oracle(data: bytes) -> bytes:
    for j in range(len(data), -1, -1):
        try:
            data[:j].decode("utf-8")
            return data[:j]
        except UnicodeDecodeError:
            pass
    return b""


def draft_oracle(
    vocab, ids, *, min_match, max_match, max_tokens, max_bytes, limit, encode, greedy, cut, min_punctuation=1, word_starts=False
) -> list[int]:
    data = spell(vocab, ids)
    start = echo_oracle(data, min_match, max_match, min_punctuation, word_starts)
    limit = min(limit, max_tokens)
    if start < 0 or limit <= 0:
        return []
    starts = [len(spell(vocab, ids[:k])) for k in range(len(ids))]
    if start in starts:  # the echo begins on a token boundary: the context's own tokens
        tokens, used = [], 0
        for t in ids[starts.index(start) :][:limit]:
            used += len(vocab.token_bytes[t])
            if used > max_bytes:
                break
            tokens.append(t)
        return tokens[: cut(tokens)]
    text = utf8_oracle(data[start : start + max_bytes])
    if not text:
        return []
    tokens = None
    if encode is not None:
        tokens = encode(text.decode("utf-8"))
        if spell(vocab, tokens) != text:
            tokens = None
    tokens = (tokens if tokens is not None else greedy(text, limit))[:limit]
    return tokens[: cut(tokens)]
