"""SamplingParams: one request's sampling settings, checked when made."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence, Union


@dataclass(frozen=True)
class SamplingParams:
    """Settings for one row, named as vLLM and transformers name them.

    temperature 0 means greedy (argmax). top_k 0 (or -1) keeps every token; top_p 1.0 and
    min_p 0.0 are off. repetition_penalty divides the positive logits of tokens already generated
    and multiplies their negative ones (1.0 is off); presence_penalty is subtracted once from
    every generated token's logit, frequency_penalty once per occurrence. seed makes the draws
    reproducible (see `sample` for how the generator is kept across steps)."""

    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    seed: Optional[int] = None

    def __post_init__(self) -> None:
        _check(math.isfinite(self.temperature) and self.temperature >= 0, "temperature", self.temperature, "a finite number >= 0 (0 = greedy)")
        _check(isinstance(self.top_k, int) and self.top_k >= -1, "top_k", self.top_k, "an integer >= 0 (0 or -1 = off)")
        _check(0 < self.top_p <= 1, "top_p", self.top_p, "in (0, 1] (1 = off)")
        _check(0 <= self.min_p <= 1, "min_p", self.min_p, "in [0, 1] (0 = off)")
        _check(math.isfinite(self.repetition_penalty) and self.repetition_penalty > 0, "repetition_penalty", self.repetition_penalty, "a finite number > 0 (1 = off)")
        _check(math.isfinite(self.presence_penalty), "presence_penalty", self.presence_penalty, "finite")
        _check(math.isfinite(self.frequency_penalty), "frequency_penalty", self.frequency_penalty, "finite")
        _check(self.seed is None or (isinstance(self.seed, int) and self.seed >= 0), "seed", self.seed, "None or an integer >= 0")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    @property
    def has_penalties(self) -> bool:
        return self.repetition_penalty != 1.0 or self.presence_penalty != 0 or self.frequency_penalty != 0

    @property
    def truncates(self) -> bool:
        return self.top_k > 0 or self.top_p < 1 or self.min_p > 0


def _check(ok: bool, name: str, value: object, rule: str) -> None:
    if not ok:
        raise ValueError(f"SamplingParams.{name} = {value!r}: must be {rule}")


def params_per_row(params: Union[SamplingParams, Sequence[SamplingParams]], batch: int) -> list[SamplingParams]:
    """One SamplingParams per row: a single one is shared; a sequence must match the batch."""
    if isinstance(params, SamplingParams):
        return [params] * batch
    rows = list(params)
    if len(rows) != batch:
        raise ValueError(f"{len(rows)} SamplingParams for a batch of {batch} rows")
    for i, p in enumerate(rows):
        if not isinstance(p, SamplingParams):
            raise TypeError(f"params[{i}] is {type(p).__name__}, not SamplingParams")
    return rows
