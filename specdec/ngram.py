"""Prompt lookup decoding: draft by copying what followed an earlier occurrence of the context's
suffix (no model, so a draft costs next to nothing).

Matching rule. For n from `max_ngram` down to `min_ngram`, take the last n tokens of the context
(prompt ids then output ids) and look up their most recent earlier occurrence (one that starts
before the suffix itself, so at least one token follows it); the draft is the tokens that followed
it, up to min(max_tokens, self.max_tokens), possibly running into the suffix. The draft is then
cut at the first token the grammar rejects (`matcher.validate_tokens`; the matcher is never
advanced). If that leaves nothing (the grammar rejects the first copied token), the next shorter n
is tried, whose most recent occurrence may be followed by something else; earlier occurrences of
the same n are not searched. So a step costs one dict look-up and at most one `validate_tokens`
per n, whatever the context length.

Index. One dict per n maps an n-gram to the start of its most recent occurrence that has a token
after it; it grows with the context. A call whose context extends the previous one (same length or
longer, equal at the last stored position and at a few spread-out positions) only indexes the new
tokens; any other context (a new request) rebuilds it. The spot check is not a full comparison, so
every hit is also checked against the context itself (n tokens), and a stale hit rebuilds the
index; call `reset()` when a new request starts to skip the guess entirely. Contexts passed as
Python lists are the fast path (others are converted with `.tolist()` or `list()`).
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, Optional, Sequence

from .drafting import Draft
from .randomness import Randomness

__all__ = ["NgramDrafter"]

_SPOTS = 8  # positions spot-checked (besides the first and the last stored) to tell a new context


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


class NgramDrafter:
    """Deterministic prompt-lookup drafter (see the module docstring for the matching rule)."""

    kind = "ngram"

    def __init__(self, max_ngram: int = 3, min_ngram: int = 1, max_tokens: int = 10) -> None:
        self.min_ngram = _check_int("min_ngram", min_ngram, 1)
        self.max_ngram = _check_int("max_ngram", max_ngram, 1)
        if self.max_ngram < self.min_ngram:
            raise ValueError(f"max_ngram ({max_ngram}) must be >= min_ngram ({min_ngram})")
        self.max_tokens = _check_int("max_tokens", max_tokens, 1)
        self._sizes = tuple(range(self.max_ngram, self.min_ngram - 1, -1))  # longest first
        self.reset()

    def reset(self) -> None:
        """Forget the indexed context (the next call indexes its context from scratch)."""
        self._ids: list[int] = []
        self._index: dict[int, dict[tuple, int]] = {n: {} for n in self._sizes}

    # -- index ---------------------------------------------------------------------------------
    def _extends(self, ctx: list[int]) -> bool:
        """Cheap guess that `ctx` extends the stored context (length and spot checks)."""
        ids = self._ids
        m = len(ids)
        if m == 0:
            return True
        if len(ctx) < m or ctx[m - 1] != ids[m - 1] or ctx[0] != ids[0]:
            return False
        step = m // (_SPOTS + 1)
        if step:
            for p in range(step, m - 1, step):
                if ctx[p] != ids[p]:
                    return False
        return True

    def _sync(self, ctx: list[int]) -> None:
        """Bring the index up to `ctx`: n-grams starting at i with i + n <= len(ctx) - 1."""
        if not self._extends(ctx):
            self.reset()
        old, new = len(self._ids), len(ctx)
        if new == old:
            return
        self._ids.extend(ctx[old:new])
        for n, index in self._index.items():
            lo, hi = max(0, old - n), new - n  # new starts: lo .. hi - 1
            if hi <= lo:
                continue
            if n == 1:
                keys = zip(ctx[lo:hi])
            else:
                keys = zip(*[ctx[lo + k : hi + k] for k in range(n)])
            index.update(zip(keys, range(lo, hi)))  # later starts overwrite: the most recent wins

    # -- drafting ------------------------------------------------------------------------------
    def propose(self, context: Sequence[int], matcher: Any, max_tokens: int, rng: Optional[Randomness] = None) -> Draft:
        """Draft up to min(max_tokens, self.max_tokens) tokens copied from the context, cut where
        `matcher`'s grammar rejects (no cut if `matcher` is None). `rng` is never used."""
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, Integral) or max_tokens < 0:
            raise ValueError(f"max_tokens must be an integer >= 0, got {max_tokens!r}")
        limit = min(int(max_tokens), self.max_tokens)
        ctx = context if isinstance(context, list) else (
            context.tolist() if hasattr(context, "tolist") else list(context)
        )
        self._sync(ctx)
        L = len(ctx)
        if limit == 0:
            return Draft()
        rejected: list[int] = []
        for n in self._sizes:
            if n >= L:
                continue
            suffix = ctx[L - n :]
            i = self._index[n].get(tuple(suffix))
            if i is None:
                continue
            if ctx[i : i + n] != suffix:  # stale: the spot check let a new context by
                self.reset()  # a fresh index is never stale, so this recursion runs once
                return self.propose(ctx, matcher, max_tokens, rng)
            start = i + n
            draft = ctx[start : min(start + limit, L)]
            if draft[0] in rejected:
                continue  # the same first token, from the same grammar state: rejected again
            cut = len(draft) if matcher is None else matcher.validate_tokens(draft)
            if cut:
                return Draft(draft[:cut] if cut < len(draft) else draft, q=None, forced=0)
            rejected.append(draft[0])
        return Draft()
