"""Jump-forward as drafts: the grammar's forced bytes, tokenized, proposed to the target model.

Where every continuation of the output must start with the same bytes (`matcher.forced_bytes()`,
e.g. `{"name":"` in a JSON object with required keys), those bytes are tokenized and handed to
the verifier as deterministic draft tokens. The target model still judges every one of them
(accepting a draft iff its own draw equals it), so the output law is that of plain constrained
sampling: nothing is injected, and a tokenization the model would not choose costs acceptance
rate, never correctness.

Tokenization: the model's encoder where its tokens spell the forced bytes exactly (byte-level
BPE does; SentencePiece adds a leading "▁" and does not), else greedy longest match over the
vocabulary's non-special tokens. The forced run is cut to its longest complete-UTF-8 prefix.

Hold-back: a canonical tokenizer may merge the end of the forced run with what follows it
(forcing `order` where `orderId` is one token the grammar allows next). The trailing tokens
that a longer allowed token could cross are dropped: a token at byte offset s is dropped when
some non-special token the grammar allows at the state before it starts with the rest of the run
from s and is longer than it. The last `holdback_window` tokens are checked; where the earliest
of them can be crossed, the whole draft is dropped (the chain may reach further back).
"""

from __future__ import annotations

import inspect
import threading
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from typing import Any, Callable, Optional, Sequence

import numpy as np

from constrain.matcher import Matcher
from constrain.vocab import Vocabulary

from .drafting import Draft
from .randomness import Randomness

Encode = Callable[[str], Sequence[int]]

__all__ = ["ForcedDrafter", "forced_tokens", "TokenIndex", "token_index"]


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


# -- forced tokens ---------------------------------------------------------------------------------
def _utf8_prefix(data: bytes) -> bytes:
    """The longest prefix of `data` that is complete, valid UTF-8."""
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError as exc:
        return data[: exc.start]


def _greedy(index: TokenIndex, data: bytes, limit: int) -> list[int]:
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


def _encoded(encode: Encode, text: str, prefix: bytes, vocab: Vocabulary) -> Optional[list[int]]:
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


def _allows_any(row: np.ndarray, ids: np.ndarray) -> bool:
    """Is any of `ids` set in the int32 mask row (token t is bit t % 32 of word t // 32)?"""
    words = row[ids >> 5]
    return bool(((words >> (ids & 31)) & 1).any())


def forced_tokens(
    matcher: Matcher,
    encode: Optional[Encode] = None,
    *,
    max_tokens: int = 32,
    holdback_window: int = 4,
) -> list[int]:
    """Tokens spelling (a prefix of) the forced bytes at `matcher`'s position, every one accepted
    by the grammar in sequence, with the trailing tokens a longer allowed token could cross held
    back; at most `max_tokens`. The matcher is not advanced.

    `encode`: optional str -> token ids (the model's tokenizer without special tokens); its
    tokens are used where they spell the forced bytes exactly, else greedy longest match."""
    if max_tokens <= 0:
        return []
    compiled = matcher.compiled
    state = matcher.state
    forced = compiled.forced_bytes(state)
    if not forced:
        return []
    vocab = compiled.vocab
    index = token_index(vocab)
    budget = max_tokens + max(holdback_window, 0)
    # Tokenize no more than the draft can use: a run cut here is held back like any other end.
    cap = max(64, 16 * budget)
    data = _utf8_prefix(forced[:cap] if len(forced) > cap else forced)
    if not data:
        return []

    tokens: Optional[list[int]] = None
    if encode is not None:
        tokens = _encoded(encode, data.decode("utf-8"), data, vocab)
        if tokens is not None and len(tokens) > budget:
            tokens = tokens[:budget]
    if tokens is None:
        tokens = _greedy(index, data, budget)
    if not tokens:
        return []

    # Accepted in sequence; states[i] is the state before tokens[i].
    table = vocab.token_bytes
    states = [state]
    starts = [0]
    for tid in tokens:
        nxt = compiled.next_state(states[-1], tid)
        if nxt is None:
            break
        states.append(nxt)
        starts.append(starts[-1] + len(table[tid]))
    n = len(states) - 1
    end = starts[n]  # the bytes the kept tokens spell: data[:end]

    # Hold-back over the last `holdback_window` tokens.
    cut = n
    if holdback_window > 0:
        lowest = max(0, n - holdback_window)
        rows = compiled.row_cache()
        for j in range(n - 1, lowest - 1, -1):
            longer = index.extensions(data[starts[j] : end])
            if not longer.size:
                continue
            row = rows.get(states[j])
            if row is None:
                row = compiled.mask_row(states[j])
            if _allows_any(row, longer):
                cut = j
        if cut == lowest and cut > 0:
            cut = 0  # the earliest token in the window can be crossed: so may those before it
    return tokens[: min(cut, max_tokens)]


# -- the drafter -----------------------------------------------------------------------------------
class ForcedDrafter:
    """Drafts the grammar-forced run (jump-forward), verified by the target like any draft.

    `encode`: None (greedy longest match over the vocabulary), a callable str -> ids, or a
    tokenizer object with `.encode` (transformers, tokenizers, sentencepiece), called with
    `add_special_tokens=False` where it takes that keyword."""

    kind = "forced"

    def __init__(self, encode: Any = None, max_tokens: int = 32, *, holdback_window: int = 4) -> None:
        self.max_tokens = int(max_tokens)
        self.holdback_window = int(holdback_window)
        self._encode: Optional[Encode] = _as_encode(encode)

    def propose(self, context: Sequence[int], matcher: Matcher, max_tokens: int, rng: Randomness) -> Draft:
        limit = min(int(max_tokens), self.max_tokens)
        if limit <= 0:
            return Draft(tokens=[], q=None, forced=0)
        tokens = forced_tokens(matcher, self._encode, max_tokens=limit, holdback_window=self.holdback_window)
        return Draft(tokens=tokens, q=None, forced=len(tokens))


def _as_encode(encode: Any) -> Optional[Encode]:
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
