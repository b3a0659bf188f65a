"""The acceptance rule: which drafted tokens the target keeps, and the token it adds.

Input: the target's final distributions p_0..p_m (exactly what plain constrained sampling would
draw from at each position: mask from the state after the accepted prefix and the drafts before
it, penalties counting those drafts, temperature, truncation), the drafted tokens, and per token
the distribution q it was drawn from (None for a deterministic drafter). Both are renormalized in
float64 so the rule below is exact up to rounding (1e-16), not float32's 1e-7.

- q known: accept x with probability min(1, p(x)/q(x)); on rejection draw from
  norm(max(0, p − q)) and stop.
- q unknown: draw y ~ p; accept iff y = x, else y is the emitted token (y ~ p given y != x is
  exactly the residual of a point mass at x, so this is the same rule).
- all drafts accepted: a bonus token from p at the next position.
A token the grammar marks as terminating (EOS) ends the output: nothing follows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from .randomness import Randomness


@dataclass
class Verdict:
    """`tokens`: accepted drafts, then the one token the target drew (a correction or the
    bonus) unless a terminating draft ended the output. `accepted`: how many drafts were kept;
    `rejected`: whether a draft was rejected (False when all were kept or one terminated)."""

    tokens: list[int]
    accepted: int
    rejected: bool


def accept_drafts(
    target_probs: Any,
    drafts: Sequence[int],
    draft_probs: Optional[Sequence[Optional[Any]]],
    rng: Randomness,
    *,
    terminates: Callable[[int], bool],
    greedy: bool = False,
) -> Verdict:
    """Apply the acceptance rule. `target_probs` (rows, width) holds p for positions 0..m: at
    least up to the first draft the grammar rejects or that terminates (where p is 0 or the
    output ends), else len(drafts) + 1 rows. `greedy`: p rows are one-hot (temperature 0), so a
    draw is the argmax and uses no randomness."""
    rows = target_probs.shape[0]
    out: list[int] = []
    for i, x in enumerate(drafts):
        if i >= rows:
            raise ValueError(f"target_probs has {rows} rows; position {i} (draft {x}) needs one")
        p = target_probs[i]
        q = None if draft_probs is None else draft_probs[i]
        if q is None:
            y = _draw(p, rng, greedy)
            if y != x:
                return Verdict(out + [y], i, True)
        else:
            qx = float(q[x]) / _total(q)
            if not qx > 0:
                raise ValueError(f"draft token {x} at position {i} has probability 0 under its own q")
            if not rng.bernoulli(float(p[x]) / _total(p) / qx):
                return Verdict(out + [rng.categorical(_residual(_normalized(p), _normalized(q)))], i, True)
        out.append(int(x))
        if terminates(int(x)):
            return Verdict(out, i + 1, False)
    if rows <= len(drafts):
        raise ValueError(f"target_probs has {rows} rows; the bonus position {len(drafts)} needs one")
    return Verdict(out + [_draw(target_probs[len(drafts)], rng, greedy)], len(drafts), False)


def _total(probs: Any) -> float:
    import torch

    total = float(probs.sum(dtype=torch.float64))
    if not total > 0:
        raise ValueError("a probability row sums to zero")
    return total


def _residual(p: Any, q: Any) -> Any:
    """What a rejection draws from: max(0, p - q) (unnormalized; `categorical` normalizes)."""
    import torch

    residual = torch.clamp(p - q, min=0)
    return residual if bool(residual.sum() > 0) else p  # p == q up to rounding: rejection had mass 0


def _normalized(probs: Any) -> Any:
    import torch

    p = probs.to(torch.float64)
    total = p.sum()
    if not bool(total > 0):
        raise ValueError("a probability row sums to zero")
    return p / total


def _draw(p: Any, rng: Randomness, greedy: bool) -> int:
    """y ~ p (categorical normalizes); the argmax of a one-hot p without randomness."""
    return int(p.argmax()) if greedy else rng.categorical(p)
