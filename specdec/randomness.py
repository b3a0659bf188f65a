"""Where speculative decoding's random choices come from.

Every random choice a speculative step makes (a model drafter's draw from q, the accept/reject coin,
the residual and bonus draws) goes through one `Randomness` object with two methods. The real one
draws from a seeded torch.Generator; tests pass one that enumerates every outcome with its exact
probability, so the exact law of the code that runs is computed, not of a formula beside it.
"""

from __future__ import annotations

from typing import Any, Optional, Protocol


class Randomness(Protocol):
    def categorical(self, probs: Any) -> int:
        """An index drawn with probability probs[i] / probs.sum() (a 1-D float tensor, >= 0)."""
        ...

    def bernoulli(self, prob: float) -> bool:
        """True with probability `prob` (clipped to [0, 1])."""
        ...


class TorchRandomness:
    """Draws from a torch.Generator (seeded for reproducible output), by inverse CDF in float64:
    one uniform per draw, and an index of probability 0 is never returned."""

    def __init__(self, generator: Optional[Any] = None) -> None:
        self.generator = generator

    def categorical(self, probs: Any) -> int:
        import torch

        p = probs.to(torch.float64)
        cdf = torch.cumsum(p, dim=0)
        total = cdf[-1]
        if not bool(total > 0):
            raise ValueError("categorical: the probabilities sum to zero")
        u = torch.rand((), generator=self.generator, dtype=torch.float64, device=p.device)
        i = int(torch.searchsorted(cdf, (u * total).reshape(1), right=True))
        if i >= p.shape[0] or not bool(p[i] > 0):  # u * total rounded up to the total
            i = int(p.nonzero()[-1])
        return i

    def bernoulli(self, prob: float) -> bool:
        import torch

        if prob >= 1.0:
            return True
        if prob <= 0.0:
            return False
        u = torch.rand((), generator=self.generator, dtype=torch.float64)
        return bool(u < prob)
