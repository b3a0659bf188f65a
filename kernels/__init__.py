"""Bitmask and sampling kernels (installed as constrain.kernels)."""

from .bitmask import allocate_token_bitmask, apply_token_bitmask_inplace, bitmask_words, unpack_bitmask
from .sampling import sample
from .sampling_params import SamplingParams

__all__ = [
    "SamplingParams",
    "allocate_token_bitmask", "apply_token_bitmask_inplace", "bitmask_words", "sample",
    "unpack_bitmask",
]
