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

import threading
from typing import Any, Optional, Sequence

import numpy as np

from constrain.matcher import Matcher

from .drafting import Draft
from .randomness import Randomness
from .token_spelling import Encode, TokenIndex, as_encode, encoded, greedy, token_index, utf8_prefix

SPELLING_WINDOW = 512  # ids searched for a run's earlier spelling (and kept by SpellingMemory)

__all__ = ["ForcedDrafter", "SpellingMemory", "forced_tokens", "TokenIndex", "token_index"]


# -- forced tokens ---------------------------------------------------------------------------------
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
    history: Sequence[int] = (),
    memory: Sequence[int] = (),
) -> list[int]:
    """Tokens spelling (a prefix of) the forced bytes at `matcher`'s position, every one accepted
    by the grammar in sequence, with the trailing tokens a longer allowed token could cross held
    back; at most `max_tokens`. The matcher is not advanced.

    `encode`: optional str -> token ids (the model's tokenizer without special tokens); its
    tokens are used where they spell the forced bytes exactly, else greedy longest match.
    `history`: the ids so far (prompt and output); where the same bytes (or the run's tail after
    a canonical token boundary) were already spelled there by a run of whole tokens, that
    spelling is drafted as it is, with no hold-back: the model has shown how it tokenizes this
    text (JSON keys repeat their `":"`-style joints), and a canonical spelling it does not use
    would be rejected every time. `memory`: ids of the model's earlier outputs (SpellingMemory),
    consulted where the history holds no such spelling: a request's first forced run (`{"name":"`)
    is spelled as the model spelled it before."""
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
    data = utf8_prefix(forced[:cap] if len(forced) > cap else forced)
    if not data:
        return []
    special = vocab.special_ids  # a special token's text is not a spelling the grammar accepts
    table = vocab.token_bytes

    def model_spelling(run: bytes) -> Optional[list[int]]:
        for ids in (history, memory):
            found = spelled_before(ids, run, table) if len(ids) else None
            if found is not None and special.isdisjoint(found):
                return found
        return None

    seen = model_spelling(data)
    if seen is not None:
        return _accepted_prefix(compiled, state, seen[:max_tokens])

    tokens: Optional[list[int]] = None
    if encode is not None:
        tokens = encoded(encode, data.decode("utf-8"), data, vocab)
        if tokens is not None and len(tokens) > budget:
            tokens = tokens[:budget]
    if tokens is None:
        tokens = greedy(index, data, budget)
    if not tokens:
        return []

    if len(history) or len(memory):
        # the model's own spelling of the run's tail, after the canonical head up to a boundary
        pos = 0
        for k, tid in enumerate(tokens[:-1]):
            pos += len(table[tid])
            tail = model_spelling(data[pos:])
            if tail is not None:
                return _accepted_prefix(compiled, state, (tokens[: k + 1] + tail)[:max_tokens])

    # Accepted in sequence; states[i] is the state before tokens[i].
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


def spelled_before(
    history: Sequence[int], data: bytes, table: Sequence[bytes], window: int = SPELLING_WINDOW
) -> Optional[list[int]]:
    """The most recent run of whole tokens in the last `window` ids of `history` that spells
    exactly `data`, or None."""
    first = data[:1]
    stop = max(-1, len(history) - window - 1)
    n = len(history)
    for i in range(n - 1, stop, -1):
        piece = table[history[i]]
        if not piece or not piece.startswith(first) or not data.startswith(piece):
            continue
        pos, j = len(piece), i + 1
        while pos < len(data) and j < n:
            piece = table[history[j]]
            if not piece or not data.startswith(piece, pos):
                break
            pos, j = pos + len(piece), j + 1
        if pos == len(data):
            return [int(t) for t in history[i:j]]
    return None


def _accepted_prefix(compiled: Any, state: Any, tokens: list[int]) -> list[int]:
    for k, tid in enumerate(tokens):
        state = compiled.next_state(state, tid)
        if state is None:
            return tokens[:k]
    return tokens


# -- the drafter -----------------------------------------------------------------------------------
class SpellingMemory:
    """The last `size` token ids a model emitted, over requests: how it spells the text grammars
    force (a model that writes `{` `"` `name` `":` rejects the canonical `{"` every time). Kept
    per model object by the generation loop; appends are atomic, readers take a snapshot."""

    def __init__(self, size: int = SPELLING_WINDOW) -> None:
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self.size = size
        self._ids: tuple[int, ...] = ()
        self._lock = threading.Lock()

    def add(self, ids: Sequence[int]) -> None:
        with self._lock:
            self._ids = (self._ids + tuple(int(t) for t in ids))[-self.size :]

    def ids(self) -> tuple[int, ...]:
        return self._ids


class ForcedDrafter:
    """Drafts the grammar-forced run (jump-forward), verified by the target like any draft.

    `encode`: None (greedy longest match over the vocabulary), a callable str -> ids, or a
    tokenizer object with `.encode` (transformers, tokenizers, sentencepiece), called with
    `add_special_tokens=False` where it takes that keyword. `memory`: a SpellingMemory of the
    model's earlier outputs (with learn_spelling)."""

    kind = "forced"

    def __init__(
        self, encode: Any = None, max_tokens: int = 32, *, holdback_window: int = 4, learn_spelling: bool = True,
        memory: Optional[SpellingMemory] = None,
    ) -> None:
        self.max_tokens = int(max_tokens)
        self.learn_spelling = learn_spelling
        self.holdback_window = int(holdback_window)
        self.memory = memory
        self._encode: Optional[Encode] = as_encode(encode)

    def propose(self, context: Sequence[int], matcher: Matcher, max_tokens: int, rng: Randomness) -> Draft:
        limit = min(int(max_tokens), self.max_tokens)
        if limit <= 0:
            return Draft(tokens=[], q=None, forced=0)
        tokens = forced_tokens(
            matcher, self._encode, max_tokens=limit, holdback_window=self.holdback_window,
            history=context if self.learn_spelling else (),
            memory=self.memory.ids() if self.learn_spelling and self.memory is not None else (),
        )
        return Draft(tokens=tokens, q=None, forced=len(tokens))


