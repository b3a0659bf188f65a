"""Bitmask and sampling kernels (installed as constrain.kernels)."""

from .bitmask import allocate_token_bitmask, apply_token_bitmask_inplace, bitmask_words, unpack_bitmask

__all__ = ["allocate_token_bitmask", "apply_token_bitmask_inplace", "bitmask_words", "unpack_bitmask"]
