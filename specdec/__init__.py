"""Speculative decoding under the grammar mask, exactly lossless (installed as constrain.specdec).

Drafters propose tokens from a fork of the grammar state; the target scores them all in one
pass; the acceptance rule keeps a prefix and adds one token, so the output law is that of plain
constrained sampling. `constrain.generate(..., draft=..., jump_forward=True)` is the usual entry;
`speculative_decode` runs the loop over any `logits(ids, last)` target.
"""

from .drafting import Draft, Drafter
from .jump_forward import ForcedDrafter, forced_tokens
from .metrics import SpecMetrics
from .model_drafter import ModelDrafter
from .ngram import NgramDrafter
from .planning import GammaController, accepted_per_drafted, best_gamma, expected_accepted, expected_tokens, speedup
from .randomness import Randomness, TorchRandomness
from .speculate import SpecResult, speculative_decode
from .text_lookup import TextLookupDrafter
from .verify import Verdict, accept_drafts

__all__ = [
    "Draft", "Drafter", "ForcedDrafter", "GammaController", "ModelDrafter", "NgramDrafter", "Randomness",
    "SpecMetrics", "SpecResult", "TextLookupDrafter", "TorchRandomness", "Verdict",
    "accept_drafts", "accepted_per_drafted", "best_gamma", "expected_accepted", "expected_tokens",
    "forced_tokens", "speculative_decode", "speedup",
]
