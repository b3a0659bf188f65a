"""The GPU backend: a Triton kernel, one program per (selected row, block of BLOCK_WORDS words).

Each program loads its block's mask words once, expands them to one bit per column, and stores
-inf's bit pattern into the masked columns only. As in the numba backend the logits are viewed as
same-width integers, so every float dtype shares the kernel and the stored bits are exactly those
torch's `masked_fill_(-inf)` writes. Allowed columns are neither read nor written: masking costs
the mask read plus the masked columns' writes, and duplicate rows (all writing the same bits)
cannot race.

Under TRITON_INTERPRET=1 (set before triton is first imported) the same kernel runs on CPU
tensors, which is how the tests check it on machines without a GPU.
"""

from __future__ import annotations

import os
from typing import Optional

import torch
import triton
import triton.language as tl

from .bitmask import integer_view, neg_inf_bits

BLOCK_WORDS = 32  # 1024 columns per program

_interpret_knob = getattr(getattr(getattr(triton, "knobs", None), "runtime", None), "interpret", None)
INTERPRETED: bool = bool(
    _interpret_knob
    if _interpret_knob is not None
    else os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")
)


def unusable_reason(logits: torch.Tensor) -> Optional[str]:
    """Triton runs on CUDA (and ROCm, which torch also calls cuda) tensors; on CPU tensors only when
    triton was imported under TRITON_INTERPRET=1."""
    if integer_view(logits.dtype) is None:
        return f"triton takes float16, bfloat16, float32 or float64 logits, not {logits.dtype}"
    if logits.device.type == "cuda" and not INTERPRETED:
        return None
    if logits.device.type == "cpu" and INTERPRETED:
        return None
    mode = "interpreter (TRITON_INTERPRET=1) runs on CPU" if INTERPRETED else "runs on CUDA"
    return f"triton's {mode} tensors, these are on {logits.device.type}"


def apply_rows(
    logits2: torch.Tensor, mask2: torch.Tensor, rows_l: Optional[torch.Tensor], rows_m: Optional[torch.Tensor]
) -> None:
    """Mask logits2[rows_l[k]] by mask2[rows_m[k]] for every k; None rows: row i by mask row i
    (then nothing is copied to the device but the mask, if it is elsewhere).
    The rows come validated from bitmask.py."""
    n_rows, width = logits2.shape
    if width == 0:
        return
    row_stride, col_stride = logits2.stride()
    if not _distinct_elements(logits2):
        # Elements sharing memory (an expand()): the reference handles (or refuses) those; programs
        # writing them in parallel must not. Any other strides (a transpose too) the kernel takes.
        from .bitmask_torch import apply_rows as reference

        reference(logits2, mask2, rows_l, rows_m)
        return
    device = logits2.device
    mask_words = mask2.shape[1]
    mask = mask2.to(device).contiguous()
    if mask.numel() == 0:  # an empty tensor has no address triton accepts; no word is loaded anyway
        mask = torch.zeros((1, 1), dtype=torch.int32, device=device)
    identity = rows_l is None or rows_m is None
    if identity:
        rows_l = rows_m = mask  # any pointer: the kernel does not read it
    grid = (n_rows if identity else rows_l.numel(), triton.cdiv(triton.cdiv(width, 32), BLOCK_WORDS))
    _mask_kernel[grid](
        logits2.view(integer_view(logits2.dtype)), row_stride, col_stride, width,
        mask, mask.stride(0), mask_words,
        rows_l.to(device), rows_m.to(device),
        NEG=neg_inf_bits(logits2.dtype), IDENTITY=identity, BLOCK_WORDS=BLOCK_WORDS,
    )


def _distinct_elements(t: torch.Tensor) -> bool:
    """Whether no two elements of the 2-D tensor `t` share an address."""
    dims = sorted((stride, size) for stride, size in zip(t.stride(), t.shape) if size > 1)
    if not dims:
        return True
    if dims[0][0] < 1:
        return False
    return len(dims) == 1 or dims[1][0] >= dims[0][0] * dims[0][1]


@triton.jit
def _mask_kernel(
    logits_ptr, row_stride, col_stride, width,
    mask_ptr, mask_stride, mask_words,
    rows_l_ptr, rows_m_ptr,
    NEG: tl.constexpr, IDENTITY: tl.constexpr, BLOCK_WORDS: tl.constexpr,
):  # pragma: no cover - runs in triton
    k = tl.program_id(0)
    if IDENTITY:
        row = k.to(tl.int64)
        mask_row = row
    else:
        row = tl.load(rows_l_ptr + k).to(tl.int64)
        mask_row = tl.load(rows_m_ptr + k).to(tl.int64)
    words = tl.program_id(1) * BLOCK_WORDS + tl.arange(0, BLOCK_WORDS)
    # Words past the mask's own read as 0: those columns are masked.
    word = tl.load(mask_ptr + mask_row * mask_stride + words, mask=words < mask_words, other=0)
    bits = tl.arange(0, 32)
    cols = words[:, None] * 32 + bits[None, :]  # (BLOCK_WORDS, 32)
    allowed = ((word[:, None] >> bits[None, :]) & 1) != 0
    ptrs = logits_ptr + row * row_stride + cols.to(tl.int64) * col_stride
    neg = tl.full((BLOCK_WORDS, 32), NEG, logits_ptr.dtype.element_ty)
    tl.store(ptrs, neg, mask=(cols < width) & ~allowed)
