"""Spelling bytes with a vocabulary's tokens: the model's encoder where its tokens spell the
bytes exactly (byte-level BPE does; SentencePiece adds a leading "▁" and does not), else greedy
longest match over the ordinary tokens. Jump-forward (forced runs) and text lookup (prompt
echoes) both draft tokens for known bytes this way.
"""

from __future__ import annotations

import inspect
import threading
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from typing import Any, Callable, Optional, Sequence

import numpy as np

from constrain.vocab import Vocabulary

Encode = Callable[[str], Sequence[int]]


def spell(vocab: Vocabulary, data: bytes, encode: Optional[Encode], limit: int) -> list[int]:
    """At most `limit` ordinary tokens spelling a prefix of `data` (its complete-UTF-8 part):
    the encoder's tokens if they spell it exactly, else greedy longest match."""
    data = utf8_prefix(data)
    if not data or limit <= 0:
        return []
    if encode is not None:
        tokens = encoded(encode, data.decode("utf-8"), data, vocab)
        if tokens is not None:
            return tokens[:limit]
    return greedy(token_index(vocab), data, limit)


# -- the per-vocabulary index ----------------------------------------------------------------------
class TokenIndex:
    """The non-special, non-empty tokens of a vocabulary sorted by (bytes, id).

    `keys[i]` is the bytes of token `ids[i]`. Tokens starting with a prefix P form the contiguous
    range [bisect_left(keys, P), bisect_left(keys, successor(P))); those with P as a *proper*
    prefix start at bisect_right(keys, P)."""

    __slots__ = ("keys", "ids", "size")

    def __init__(self, vocab: Vocabulary) -> None:
        table = vocab.token_bytes
        special = vocab.special_ids
        pairs = sorted((data, tid) for tid, data in enumerate(table) if data and tid not in special)
        self.keys: list[bytes] = [data for data, _ in pairs]
        self.ids = np.fromiter((tid for _, tid in pairs), dtype=np.int64, count=len(pairs))
        self.size = vocab.size

    def longest_prefix(self, data: bytes, start: int) -> int:
        """Index (into keys/ids) of the longest token that is a prefix of data[start:]; among
        tokens with equal bytes, the highest id (SentencePiece's byte-fallback pieces and a BPE
        vocabulary's base tokens come before the pieces an encoder prefers). -1 if none."""
        keys = self.keys
        rest = data[start:]
        query = rest
        hi = len(keys)
        while query:
            k = bisect_right(keys, query, 0, hi) - 1
            if k < 0:
                return -1
            key = keys[k]
            if rest.startswith(key):
                return k
            # keys[k] < query but is not a prefix: the longest prefix of `rest` in keys is no
            # longer than the common prefix of keys[k] and query (anything longer sorts between).
            n = min(len(key), len(query))
            lcp = 0
            while lcp < n and key[lcp] == query[lcp]:
                lcp += 1
            query = query[:lcp]
            hi = k
        return -1

    def extensions(self, prefix: bytes) -> np.ndarray:
        """Ids of the tokens that have `prefix` as a proper prefix (a view, possibly empty)."""
        keys = self.keys
        lo = bisect_right(keys, prefix)
        if lo >= len(keys) or not keys[lo].startswith(prefix):
            return self.ids[:0]
        succ = _successor(prefix)
        hi = len(keys) if succ is None else bisect_left(keys, succ, lo)
        return self.ids[lo:hi]


def _successor(prefix: bytes) -> Optional[bytes]:
    """The least byte string greater than every string starting with `prefix` (None: no bound)."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return None
    return trimmed[:-1] + bytes((trimmed[-1] + 1,))


_INDEX_CACHE: "OrderedDict[str, TokenIndex]" = OrderedDict()
_INDEX_CACHE_SIZE = 4
_INDEX_LOCK = threading.Lock()


def token_index(vocab: Vocabulary) -> TokenIndex:
    """The TokenIndex of `vocab`, built once and kept for the last few vocabularies used
    (keyed by fingerprint, so equal vocabularies share it)."""
    key = vocab.fingerprint
    index = _INDEX_CACHE.get(key)
    if index is not None:
        try:
            _INDEX_CACHE.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile; this caller keeps its copy
            pass
        return index
    with _INDEX_LOCK:
        index = _INDEX_CACHE.get(key)
        if index is None:
            index = TokenIndex(vocab)
            _INDEX_CACHE[key] = index
            while len(_INDEX_CACHE) > _INDEX_CACHE_SIZE:
                _INDEX_CACHE.popitem(last=False)
        else:
            _INDEX_CACHE.move_to_end(key)
    return index


def utf8_prefix(data: bytes) -> bytes:
    """The longest prefix of `data` that is complete, valid UTF-8."""
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError as exc:
        return data[: exc.start]


def greedy(index: TokenIndex, data: bytes, limit: int) -> list[int]:
    """Greedy longest-match tokens of `data`, at most `limit`; stops where no token fits."""
    out: list[int] = []
    pos = 0
    keys, ids = index.keys, index.ids
    while pos < len(data) and len(out) < limit:
        k = index.longest_prefix(data, pos)
        if k < 0:
            break
        out.append(int(ids[k]))
        pos += len(keys[k])
    return out


def encoded(encode: Encode, text: str, prefix: bytes, vocab: Vocabulary) -> Optional[list[int]]:
    """The encoder's tokens of `text` if they are ordinary tokens spelling exactly `prefix`."""
    raw = encode(text)
    ids = _as_id_list(raw)
    table, special, size = vocab.token_bytes, vocab.special_ids, vocab.size
    parts = []
    for tid in ids:
        if not 0 <= tid < size or tid in special:
            return None
        parts.append(table[tid])
    if b"".join(parts) != prefix:
        return None
    return ids


def _as_id_list(raw: Any) -> list[int]:
    """An encoder's output as a list of ints: a list, a tokenizers.Encoding (`.ids`), a
    BatchEncoding/dict (`input_ids`), an array or a tensor."""
    if hasattr(raw, "ids") and not isinstance(raw, (list, tuple)):
        raw = raw.ids
    elif isinstance(raw, dict) or hasattr(raw, "input_ids"):
        raw = raw["input_ids"]
    if hasattr(raw, "tolist"):
        raw = raw.tolist()
    return [int(t) for t in raw]


def as_encode(encode: Any) -> Optional[Encode]:
    if encode is None:
        return None
    method = getattr(encode, "encode", None)
    if method is None:
        if not callable(encode):
            raise TypeError(f"encode must be a callable or a tokenizer with .encode, got {type(encode).__name__}")
        return encode
    takes = _takes_keyword(method, "add_special_tokens")
    if takes is True:
        return lambda text: method(text, add_special_tokens=False)
    if takes is False:
        return lambda text: method(text)
    return _ProbingEncode(method)


def _takes_keyword(fn: Callable[..., Any], name: str) -> Optional[bool]:
    """Does `fn` take keyword `name`? None where its signature cannot be read."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


class _ProbingEncode:
    """Calls `method(text, add_special_tokens=False)` until that raises TypeError once, then
    `method(text)` (for encoders whose signature cannot be inspected)."""

    __slots__ = ("method", "keyword")

    def __init__(self, method: Callable[..., Any]) -> None:
        self.method = method
        self.keyword = True

    def __call__(self, text: str) -> Any:
        if self.keyword:
            try:
                return self.method(text, add_special_tokens=False)
            except TypeError:
                self.keyword = False
        return self.method(text)
