"""Speculative decoding's figures for one request, named as engines name them.

- alpha: per-position acceptance: of the draft positions the target tried, the fraction kept
  (a pass stops at its first rejection, so later drafts are never tried); `alpha_ema` follows the
  recent passes.
- accepted_per_drafted: kept drafts over all drafted tokens (what vLLM calls acceptance rate;
  lower than alpha, because untried drafts count as drafted).
- mean_acceptance_length: tokens emitted per target pass (the figure that predicts speed-up).
- forced_tokens: drafts that came from grammar-forced runs (jump-forward) and were kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SpecMetrics:
    target_passes: int = 0
    emitted: int = 0
    drafted: int = 0
    accepted: int = 0
    tried: int = 0
    forced_drafted: int = 0
    forced_tokens: int = 0
    alpha_ema: float = 0.0
    ema_weight: float = 0.2
    passes: list[tuple[int, int, int]] = field(default_factory=list)  # (drafted, forced, accepted)

    def observe(self, forced_flags: list[bool], accepted: int, rejected: bool, emitted: int) -> None:
        """One verification pass over drafts whose `forced_flags` say which came from a forced run;
        the first `accepted` were kept; `rejected`: it stopped at a rejection; `emitted` tokens out."""
        drafted = len(forced_flags)
        forced = sum(forced_flags)
        self.target_passes += 1
        self.emitted += emitted
        self.drafted += drafted
        self.accepted += accepted
        self.forced_drafted += forced
        self.forced_tokens += sum(forced_flags[:accepted])
        tried = accepted + (1 if rejected else 0)
        self.tried += tried
        if tried:
            w = 1.0 - (1.0 - self.ema_weight) ** tried
            rate = accepted / tried
            self.alpha_ema = rate if self.tried == tried else (1 - w) * self.alpha_ema + w * rate
        self.passes.append((drafted, forced, accepted))

    @property
    def alpha(self) -> float:
        return self.accepted / self.tried if self.tried else 0.0

    @property
    def accepted_per_drafted(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0

    @property
    def mean_acceptance_length(self) -> float:
        return self.emitted / self.target_passes if self.target_passes else 0.0

    def log_line(self) -> str:
        """One line per request: the totals, then accepted/drafted for every pass that drafted."""
        per_pass = " ".join(f"{a}/{d}" + (f"(f{f})" if f else "") for d, f, a in self.passes if d)
        return (
            f"specdec: {self.emitted} tokens in {self.target_passes} target passes "
            f"(mean acceptance length {self.mean_acceptance_length:.2f}), alpha {self.alpha:.2f}, "
            f"accepted/drafted {self.accepted}/{self.drafted}, forced {self.forced_tokens}; "
            f"per pass accepted/drafted: {per_pass or '-'}"
        )
