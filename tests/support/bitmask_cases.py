"""Random logits and masks for the bitmask backends' tests (shared by the numba and Triton ones).

On pytest's `pythonpath` (pyproject.toml): test modules import it by name, which they cannot do
with each other under --import-mode=importlib.
"""

from __future__ import annotations

import torch

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64]
INT_VIEW = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(INT_VIEW[t.element_size()])


def random_logits(rows: int, width: int, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """Normal logits with NaN, +inf and -inf sprinkled in (about 3% each)."""
    x = torch.randn(rows, width, generator=gen, dtype=torch.float64)
    u = torch.rand(rows, width, generator=gen)
    x[u < 0.03] = float("nan")
    x[(u >= 0.03) & (u < 0.06)] = float("inf")
    x[(u >= 0.06) & (u < 0.09)] = float("-inf")
    return x.to(dtype)


def random_mask(rows: int, words: int, gen: torch.Generator) -> torch.Tensor:
    """Words of every kind, mixed: all allowed (-1), all masked (0), one bit allowed, one bit
    masked, about 4 bits masked (either side of the kernel's sparse threshold), random bits."""

    def rand() -> torch.Tensor:
        return torch.randint(0, 2**32, (rows, words), generator=gen, dtype=torch.int64)

    one_bit = torch.ones(rows, words, dtype=torch.int64) << torch.randint(0, 32, (rows, words), generator=gen)
    choices = torch.stack([torch.full_like(one_bit, 2**32 - 1), torch.zeros_like(one_bit), one_bit,
                           (2**32 - 1) ^ one_bit, rand() | rand() | rand(), rand()])
    kind = torch.randint(0, len(choices), (1, rows, words), generator=gen)
    out = choices.gather(0, kind)[0]  # as unsigned 32-bit words
    return (out - (out >= 2**31).long() * 2**32).to(torch.int32)  # one_bit << 31 wraps to int32's minimum
