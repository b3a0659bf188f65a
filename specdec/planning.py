"""Speculative-decoding planning math: how many tokens a verification pass yields, what that buys
against the draft and verification costs, and which draft length γ to use.

Model: each drafted position is accepted independently with probability α, and drafting stops at
the first rejection; a pass over γ drafts then emits 1 + (accepted drafts) tokens (the target
always contributes one: the correction or the bonus token). Costs are relative to one target
forward pass over a single position, so the planner works the same for GPU (verification nearly
free) and CPU (each verified position costs extra, `verify_cost`).
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from .pass_costs import PassCosts

__all__ = [
    "expected_tokens",
    "expected_accepted",
    "accepted_per_drafted",
    "speedup",
    "best_gamma",
    "GammaController",
]


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_real(name: str, value: object, lo: float, hi: float = math.inf) -> float:
    """A finite (or bounded) real in [lo, hi]; NaN and bools are refused."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not (lo <= v <= hi) or math.isinf(v):
        bound = f"[{lo:g}, {hi:g}]" if hi != math.inf else f">= {lo:g} and finite"
        raise ValueError(f"{name} must be {bound}, got {value!r}")
    return v


def _check_alpha(alpha: object) -> float:
    return _check_real("alpha", alpha, 0.0, 1.0)


def _expected_tokens(a: float, g: int) -> float:
    # (1 - a^(g+1)) / (1 - a) via expm1/log: the naive form cancels catastrophically as a -> 1,
    # while 1 - a is exact for a in [0.5, 1] and expm1 keeps the numerator's relative accuracy.
    if a == 1.0:
        return float(g + 1)
    if a == 0.0 or g == 0:
        return 1.0
    e = -math.expm1((g + 1) * math.log(a)) / (1.0 - a)
    return min(float(g + 1), max(1.0, e))  # keep rounding inside the true bounds


def expected_tokens(alpha: float, gamma: int) -> float:
    """Expected tokens emitted per verification pass: Σ_{i=0..γ} α^i = (1 − α^(γ+1)) / (1 − α)."""
    return _expected_tokens(_check_alpha(alpha), _check_int("gamma", gamma, 0))


def expected_accepted(alpha: float, gamma: int) -> float:
    """Expected accepted drafts per pass (tokens per pass minus the target's own token)."""
    return expected_tokens(alpha, gamma) - 1.0


def accepted_per_drafted(alpha: float, gamma: int) -> float:
    """Accepted drafts over drafted tokens, what vLLM reports as the acceptance rate; it is lower
    than α because positions after a rejection are drafted but never tried."""
    g = _check_int("gamma", gamma, 1)
    return expected_accepted(alpha, g) / g


def _speedup(a: float, g: int, c: float, v: float) -> float:
    return _expected_tokens(a, g) / (1.0 + g * c + g * v)


def speedup(alpha: float, gamma: int, c: float, verify_cost: float = 0.0) -> float:
    """Throughput relative to plain decoding: E / (1 + γ·c + γ·verify_cost).

    `c` is one draft token's cost and `verify_cost` the extra cost of each additional verified
    position, both relative to a one-position target pass (verify_cost ≈ 0 on a GPU, not on a CPU).
    """
    a = _check_alpha(alpha)
    g = _check_int("gamma", gamma, 0)
    return _speedup(a, g, _check_real("c", c, 0.0), _check_real("verify_cost", verify_cost, 0.0))


def best_gamma(alpha: float, c: float, *, verify_cost: float = 0.0, max_gamma: int = 16) -> int:
    """The γ in 0..max_gamma with the highest speedup (the smallest on ties); 0, i.e. don't
    speculate, unless some γ strictly beats plain decoding."""
    a = _check_alpha(alpha)
    cc = _check_real("c", c, 0.0)
    v = _check_real("verify_cost", verify_cost, 0.0)
    m = _check_int("max_gamma", max_gamma, 0)
    best, best_s = 0, 1.0
    for g in range(1, m + 1):
        s = _speedup(a, g, cc, v)
        if s > best_s:
            best, best_s = g, s
    return best


class GammaController:
    """Adaptive γ for one request, from running (EMA) estimates of α and of the costs.

    Call `gamma()` once per decoding step for the draft length, `observe` after each verification,
    and `observe_costs` whenever timings are at hand. When speculation does not pay (best γ = 0),
    every `probe_every`-th step still drafts one token so a recovering α can be noticed. Until
    `warmup` verifications have been observed γ is at least 1: the prior alone should not switch
    speculation off. Deterministic: no randomness.
    """

    def __init__(
        self,
        *,
        alpha0: float = 0.6,
        c0: float = 0.1,
        verify_cost0: float = 0.0,
        ema_weight: float = 0.2,
        max_gamma: int = 16,
        probe_every: int = 8,
        warmup: int = 3,
        costs: Optional["PassCosts"] = None,
    ) -> None:
        self._alpha = _check_real("alpha0", alpha0, 0.0, 1.0)
        self._c0 = _check_real("c0", c0, 0.0)
        self._v0 = _check_real("verify_cost0", verify_cost0, 0.0)
        w = _check_real("ema_weight", ema_weight, 0.0, 1.0)
        if w == 0.0:
            raise ValueError(f"ema_weight must be in (0, 1], got {ema_weight!r}")
        self._w = w
        self.max_gamma = _check_int("max_gamma", max_gamma, 0)
        self.probe_every = _check_int("probe_every", probe_every, 1)
        self.warmup = _check_int("warmup", warmup, 0)
        self.costs = costs  # measured pass cost per position count, where the loop keeps one
        self.observations = 0
        self._off_steps = 0
        # Cost EMAs in seconds; None until first observed (then the priors c0 / verify_cost0 stop
        # applying for the corresponding ratio).
        self._t1: Optional[float] = None  # one-position target pass
        self._draft: Optional[float] = None  # one draft token
        self._extra: Optional[float] = None  # each additional verified position

    def _ema(self, old: Optional[float], new: float) -> float:
        return new if old is None else old + self._w * (new - old)

    @property
    def alpha(self) -> float:
        """Current per-position acceptance estimate."""
        return self._alpha

    @property
    def c(self) -> float:
        """Draft cost per token relative to a one-position target pass."""
        one = self._one_pass()
        if self._draft is None or one is None:
            return self._c0
        return self._draft / one

    @property
    def verify_cost(self) -> float:
        """Extra cost per additional verified position, relative to a one-position pass."""
        one = self._one_pass()
        if self._extra is None or one is None:
            return self._v0
        return max(0.0, self._extra) / one  # noise can make the marginal time negative

    @property
    def has_pass_time(self) -> bool:
        """Whether a one-position target pass has been timed (the costs are relative to it)."""
        return self._one_pass() is not None

    def _one_pass(self) -> Optional[float]:
        """Seconds of a one-position pass: this request's EMA, else the model's PassCosts table
        (learned by earlier requests: a later request needs no draft-free pass to time one)."""
        if self._t1 is not None or self.costs is None:
            return self._t1
        return self.costs.seconds(1)

    def best(self) -> int:
        """best_gamma under the current estimates (no warmup floor, no probing, no side effect).
        With a PassCosts table that has measured a one-position pass, a pass over γ + 1
        positions costs what the table says (padding included) instead of the linear model."""
        if self.costs is None or self.costs.relative(1) is None:
            return best_gamma(self._alpha, self.c, verify_cost=self.verify_cost, max_gamma=self.max_gamma)
        c, v = self.c, self.verify_cost
        best, best_s = 0, 1.0
        for g in range(1, self.max_gamma + 1):
            rel = self.costs.relative(g + 1)
            cost = (rel if rel is not None else 1.0 + g * v) + g * c
            s = _expected_tokens(self._alpha, g) / cost
            if s > best_s:
                best, best_s = g, s
        return best

    @property
    def enabled(self) -> bool:
        """Whether speculation is on (probes aside)."""
        if self.max_gamma == 0:
            return False
        return self.observations < self.warmup or self.best() > 0

    def gamma(self) -> int:
        """The draft length for this step; advances the probe counter, so call once per step."""
        if self.max_gamma == 0:
            return 0
        g = self.best()
        if self.observations < self.warmup:
            g = max(g, 1)
        if g > 0:
            self._off_steps = 0
            return g
        self._off_steps += 1
        if self._off_steps >= self.probe_every:
            self._off_steps = 0
            return 1
        return 0

    def observe(self, drafted: int, accepted: int, stopped_by_rejection: bool) -> None:
        """Feed one verification: `accepted` of `drafted` drafts were accepted, and the draft ended
        at a rejection or not (all accepted, or cut short by EOS / the grammar)."""
        d = _check_int("drafted", drafted, 0)
        a = _check_int("accepted", accepted, 0)
        if a > d:
            raise ValueError(f"accepted must be <= drafted ({d}), got {a}")
        if stopped_by_rejection and a >= d:
            raise ValueError(f"stopped_by_rejection needs accepted < drafted ({d}), got accepted={a}")
        tried = a + (1 if stopped_by_rejection else 0)
        if tried == 0:
            return
        # As if each tried position were one EMA step with the pass's mean outcome: weight grows
        # with the positions seen, independent of their order within the pass.
        w = 1.0 - (1.0 - self._w) ** tried
        self._alpha = min(1.0, max(0.0, self._alpha + w * (a / tried - self._alpha)))
        self.observations += 1

    def observe_costs(
        self,
        *,
        target_seconds_1: Optional[float] = None,
        draft_seconds_per_token: Optional[float] = None,
        verify_seconds: Optional[float] = None,
        positions: Optional[int] = None,
    ) -> None:
        """Feed timings: a one-position target pass, a draft token, and/or a verification pass of
        `verify_seconds` over `positions` positions (γ + 1 for γ drafts). Any subset may be given; a
        multi-position pass only counts once a one-position time is known (this call or earlier)."""
        # Validate everything before touching state, so a bad call changes nothing.
        t1 = ds = vs = None
        n = 0
        if target_seconds_1 is not None:
            t1 = _check_real("target_seconds_1", target_seconds_1, 0.0)
            if t1 == 0.0:
                raise ValueError(f"target_seconds_1 must be > 0, got {target_seconds_1!r}")
        if draft_seconds_per_token is not None:
            ds = _check_real("draft_seconds_per_token", draft_seconds_per_token, 0.0)
        if (verify_seconds is None) != (positions is None):
            raise ValueError(
                f"verify_seconds and positions go together, got verify_seconds={verify_seconds!r}, "
                f"positions={positions!r}"
            )
        if verify_seconds is not None:
            vs = _check_real("verify_seconds", verify_seconds, 0.0)
            n = _check_int("positions", positions, 1)
            if n == 1 and vs == 0.0:
                raise ValueError(f"verify_seconds of a 1-position pass must be > 0, got {verify_seconds!r}")
        if t1 is not None:
            self._t1 = self._ema(self._t1, t1)
        if ds is not None:
            self._draft = self._ema(self._draft, ds)
        if vs is not None:
            if n == 1:
                self._t1 = self._ema(self._t1, vs)
            elif (one := self._one_pass()) is not None:
                self._extra = self._ema(self._extra, (vs - one) / (n - 1))
