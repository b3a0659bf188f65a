"""The torch reference for applying a bitmask: plain tensor ops, any device, any float dtype.

Every other backend is tested against this one bit for bit, so it stays the obvious version:
unpack the mask rows to bools, masked_fill a gathered copy of the logits rows, scatter it back.
It is also the fallback for devices and cases the fast kernels do not take (autograd, meta, MPS).
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from .bitmask import unpack_bitmask


def unusable_reason(logits: torch.Tensor) -> Optional[str]:
    """Runs anywhere torch does."""
    return None


def apply_rows(
    logits2: torch.Tensor, mask2: torch.Tensor, rows_l: Optional[torch.Tensor], rows_m: Optional[torch.Tensor]
) -> None:
    """Mask logits2[rows_l[k]] by mask2[rows_m[k]] for every k; None rows: row i by mask row i.
    The rows come validated from bitmask.py."""
    width = logits2.shape[1]
    if rows_l is None or rows_m is None:
        rows_l = torch.arange(logits2.shape[0], device=logits2.device)
        rows_m = rows_l.to(mask2.device)
    else:
        if rows_l.unique().numel() != rows_l.numel():  # a row named twice gets both masks
            for k in range(rows_l.numel()):
                apply_rows(logits2, mask2, rows_l[k : k + 1], rows_m[k : k + 1])
            return
        rows_l = rows_l.to(logits2.device)
        rows_m = rows_m.to(mask2.device)
    allowed = unpack_bitmask(mask2[rows_m], width).to(logits2.device)
    sub = logits2[rows_l]
    sub.masked_fill_(~allowed, float("-inf"))
    logits2[rows_l] = sub
