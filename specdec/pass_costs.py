"""What a target pass over n positions costs, learned from the passes themselves.

On a GPU, verifying 8 positions costs about what 1 does. On a CPU it does not, and not even
linearly: with MKL's fp32 GEMM on these machines a (2, 576) x (576, 1536) product takes 2.3x a
single row's time and (3, ...) 3.4x, while (4, ...) takes 1.8x and (8, ...) 2.2x (measured, see
docs/specdec.md), so a pass over 4 positions is cheaper than one over 3. `PassCosts` keeps an EMA
of the seconds per position count and pads a pass to the cheapest count at or a little above
what it needs (the extra positions are filler whose logits are dropped: a causal model's
earlier positions do not see them). Counts not yet measured are tried a few times first.
"""

from __future__ import annotations

from typing import Optional


class PassCosts:
    """EMA seconds of a target pass per number of positions (1..max_positions)."""

    def __init__(self, max_positions: int = 16, *, ema_weight: float = 0.3, pad_window: int = 3, min_samples: int = 2) -> None:
        if max_positions < 1:
            raise ValueError(f"max_positions must be >= 1, got {max_positions}")
        if not 0 < ema_weight <= 1:
            raise ValueError(f"ema_weight must be in (0, 1], got {ema_weight}")
        if pad_window < 0 or min_samples < 1:
            raise ValueError(f"pad_window must be >= 0 and min_samples >= 1, got {pad_window}, {min_samples}")
        self.max_positions = max_positions
        self.ema_weight = ema_weight
        self.pad_window = pad_window
        self.min_samples = min_samples
        self._seconds: list[Optional[float]] = [None] * (max_positions + 1)
        self._samples = [0] * (max_positions + 1)

    def observe(self, positions: int, seconds: float) -> None:
        if not 1 <= positions <= self.max_positions or not seconds > 0:
            return  # a prefill pass, or a count past the table: not what padding chooses between
        old = self._seconds[positions]
        self._seconds[positions] = seconds if old is None else old + self.ema_weight * (seconds - old)
        self._samples[positions] += 1

    def seconds(self, positions: int) -> Optional[float]:
        """The EMA once measured `min_samples` times, else None."""
        if 1 <= positions <= self.max_positions and self._samples[positions] >= self.min_samples:
            return self._seconds[positions]
        return None

    def padded(self, needed: int) -> int:
        """The position count to run for `needed` (>= 2) positions: `needed` itself until it is
        measured, then any not yet measured count within the window (to learn it), then the
        cheapest measured count in [needed, needed + pad_window]."""
        if needed <= 1 or needed >= self.max_positions or self.seconds(needed) is None:
            return needed  # a one-position pass is never padded
        top = min(needed + self.pad_window, self.max_positions)
        for m in range(needed + 1, top + 1):
            if self.seconds(m) is None:
                return m
        return min(range(needed, top + 1), key=lambda m: (self.seconds(m), m))

    def relative(self, needed: int) -> Optional[float]:
        """Cost of a pass that needs `needed` positions (padded as `padded` would, measured
        counts only) over a one-position pass; None until a one-position pass is measured."""
        one = self.seconds(1)
        if one is None:
            return None
        top = min(needed + self.pad_window, self.max_positions)
        known = [s for m in range(needed, top + 1) if (s := self.seconds(m)) is not None]
        return min(known) / one if known else None
