"""The drafter interface: what every drafter proposes, and how.

A drafter proposes up to `max_tokens` tokens that continue `context` (prompt and output ids so
far) from the grammar position of `matcher` (a fork the drafter may advance freely). A drafter that
samples its tokens reports q, the exact distribution each token was drawn from (the verifier
accepts with probability min(1, p/q)); a deterministic drafter (n-gram lookup, forced runs, argmax)
reports no q, and the verifier then draws y ~ p and accepts iff y equals the draft. Either way the
output law equals plain constrained sampling, provided the drafter never looks at the target's
randomness.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Protocol, Sequence

from constrain.matcher import Matcher

from .randomness import Randomness


@dataclass
class Draft:
    """Proposed tokens; `q[i]` (a 1-D float tensor over the vocabulary) is the distribution
    `tokens[i]` was drawn from, or `q` is None for a deterministic drafter. `forced` counts the
    leading tokens that came from a grammar-forced run (jump-forward); a draft assembled from
    several sources lists per token whether it was forced in `forced_flags` instead. `closing`
    counts trailing tokens past the requested count that close a copied value (value_end.py):
    a caller may keep them (a verified position each) or cut the draft to its count."""

    tokens: list[int] = field(default_factory=list)
    q: Optional[Any] = None
    forced: int = 0
    forced_flags: Optional[list[bool]] = None
    closing: int = 0

    def __len__(self) -> int:
        return len(self.tokens)

    def is_forced(self) -> list[bool]:
        """Per token: did it come from a grammar-forced run?"""
        if self.forced_flags is not None:
            return list(self.forced_flags)
        return [i < self.forced for i in range(len(self.tokens))]


class Drafter(Protocol):
    """Anything with `propose`; `kind` names it in metrics and logs."""

    kind: str

    def propose(self, context: Sequence[int], matcher: Matcher, max_tokens: int, rng: Randomness) -> Draft:
        ...
