"""Bitmask and sampling kernels (installed as constrain.kernels)."""

from .bitmask import (
    BACKENDS,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    bitmask_words,
    resolve_backend,
    unpack_bitmask,
)
from .sampling import probabilities, sample
from .sampling_params import SamplingParams

__all__ = [
    "BACKENDS", "SamplingParams",
    "allocate_token_bitmask", "apply_token_bitmask_inplace", "bitmask_words", "probabilities", "resolve_backend", "sample",
    "unpack_bitmask",
]
