"""Linear layers over a few rows on CPU, computed as W @ x.T: speculative verification and small
batches.

Verifying a draft runs the model over a few new positions at once, and a decode step of a small
batch over one position per row. On CPU, MKL's sgemm for an (n, k) x (k, m) product with small n
costs about twice its one-row gemv, so verification cost most of what the accepted drafts saved. The same product taken the other way round, (m, k) x (k, n),
streams the weight the way gemv does. SmolLM2-135M, 2 threads, medians of 7 (ms per pass):

    positions       1    2    3    4    5    6    8   10   12
    F.linear       82  145  174  154  148  149  155  147  169
    W @ x.T        80   95  102   98  110  124  129  153  165

(logits differ by ~5e-5, as between any two kernels). `narrow_linear()` routes
`torch.nn.functional.linear` through it, only while active and only for float32 CPU inputs of
2..NARROW_ROWS rows; everything else passes through untouched. Past eight rows MKL's blocked
kernels catch up, so the default stops there.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Iterator

NARROW_ROWS = 8


@contextlib.contextmanager
def narrow_linear(max_rows: int = NARROW_ROWS) -> Iterator[None]:
    """Within the block, F.linear over 2..max_rows rows on CPU runs as (W @ x.T).T."""
    with _mode_class()(max_rows):
        yield


@functools.lru_cache(maxsize=None)
def _mode_class() -> type:
    """Built on first use, so importing constrain needs no torch."""
    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode

    class NarrowLinearMode(TorchFunctionMode):
        def __init__(self, max_rows: int) -> None:
            super().__init__()
            self.max_rows = max_rows

        def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            if func is F.linear:  # the mode is off while this runs: the ops below do not recurse
                out = _narrow(torch, self.max_rows, *args, **kwargs)
                if out is not None:
                    return out
            return func(*args, **kwargs)

    return NarrowLinearMode


def _narrow(torch: Any, max_rows: int, x: Any, weight: Any, bias: Any = None) -> Any:
    if x.device.type != "cpu" or x.dtype != torch.float32 or weight.dtype != torch.float32 or weight.dim() != 2:
        return None
    rows = x.numel() // max(1, x.shape[-1])
    if not 2 <= rows <= max_rows:
        return None
    y = torch.mm(weight, x.reshape(rows, x.shape[-1]).t()).t()
    if bias is not None:
        y = y + bias
    return y.contiguous().reshape(*x.shape[:-1], weight.shape[0])
