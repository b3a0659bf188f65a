"""The CPU backend: a multi-threaded numba kernel that writes -inf's bit pattern into masked columns.

Why integers: the logits are viewed as same-width integers (fp32 as int32, bf16/fp16 as int16,
fp64 as int64), so one kernel serves every float dtype and a masked column gets exactly the bits
torch's `masked_fill_(-inf)` writes (fp32 0xFF800000, fp16 0xFC00, bf16 0xFF80); allowed columns
keep their bits, NaN payloads included. Words equal to -1 (all allowed) are skipped without
touching the logits, words equal to 0 become a plain fill.

Work is split over (row, block of BLOCK_WORDS words), so batch 1 at 128k columns still uses every
core; small jobs run on the calling thread, where starting the thread team would cost more than
the job. numba checks no bounds: the rows come validated from bitmask.py and every index below
stays inside its array by construction (tests/kernels/test_bitmask_numba.py, run with
NUMBA_BOUNDSCHECK=1 and a fresh NUMBA_CACHE_DIR, checks that).
"""

from __future__ import annotations

from typing import Any, Optional

import numba
import numpy as np
import torch

from .bitmask import integer_view, neg_inf_bits

BLOCK_WORDS = 128  # 4096 columns per parallel task: 16 KiB of fp32 logits
SERIAL_WORDS = 2048  # jobs of up to this many words (65k columns) run on the calling thread
SPARSE_ZEROS = 4  # words with at most this many masked columns store just those
# Bit index of a power of two 2**b < 2**32: _DEBRUIJN[((2**b * 0x077CB531) mod 2**32) >> 27] == b.
_DEBRUIJN = np.array(
    [0, 1, 28, 2, 29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4, 8, 31, 27, 13, 23, 21, 19, 16, 7, 26, 12, 18, 6, 11, 5, 10, 9],
    dtype=np.int64,
)

_neg_inf: dict[torch.dtype, Any] = {}  # float dtype -> -inf's bits as a numpy scalar of the view's type


def unusable_reason(logits: torch.Tensor) -> Optional[str]:
    """numba runs on CPU tensors of the dtypes integer_view knows."""
    if logits.device.type != "cpu":
        return f"numba runs on CPU tensors, these are on {logits.device.type}"
    if integer_view(logits.dtype) is None:
        return f"numba takes float16, bfloat16, float32 or float64 logits, not {logits.dtype}"
    return None


def apply_rows(
    logits2: torch.Tensor, mask2: torch.Tensor, rows_l: Optional[torch.Tensor], rows_m: Optional[torch.Tensor]
) -> None:
    """Mask logits2[rows_l[k]] by mask2[rows_m[k]] for every k; None rows: row i by mask row i.
    The rows come validated from bitmask.py."""
    n_rows, width = logits2.shape
    row_stride = logits2.stride(0) if n_rows > 1 else width
    if (logits2.stride(1) != 1 and width > 1) or row_stride < width:
        # Columns not adjacent, or rows overlapping (an expand()): the reference handles (or
        # refuses) such layouts; they are rare enough not to need a kernel of their own.
        from .bitmask_torch import apply_rows as reference

        reference(logits2, mask2, rows_l, rows_m)
        return
    span = (n_rows - 1) * row_stride + width if width else 0
    flat = logits2.as_strided((span,), (1,)).view(integer_view(logits2.dtype)).numpy()
    mask = (mask2 if mask2.device.type == "cpu" else mask2.cpu()).contiguous().numpy()
    if rows_l is None or rows_m is None:
        lrows = mrows = np.arange(n_rows, dtype=np.int64)
        repeats = False
    else:
        lrows, mrows = rows_l.numpy(), rows_m.numpy()
        repeats = _has_duplicates(lrows)
    serial = repeats or lrows.size * ((width + 31) // 32) <= SERIAL_WORDS
    kernel = _mask_rows if serial else _mask_rows_parallel
    kernel(flat, row_stride, width, mask, lrows, mrows, _neg_inf_scalar(logits2.dtype, flat.dtype), flat.itemsize >= 4)


def _has_duplicates(rows: np.ndarray) -> bool:
    """Parallel tasks on one row would race (each rewrites the columns it keeps): those run serially."""
    if rows.size < 2 or bool(np.all(rows[1:] > rows[:-1])):
        return False
    return bool(np.unique(rows).size != rows.size)


def _neg_inf_scalar(dtype: torch.dtype, view: np.dtype) -> Any:
    if dtype not in _neg_inf:
        _neg_inf[dtype] = view.type(neg_inf_bits(dtype))  # typed like the array: no casts in the kernel
    return _neg_inf[dtype]


@numba.njit(cache=True, nogil=True)
def _mask_words(flat, base, width, mask, mask_row, w0, w1, neg, select):  # pragma: no cover - numba
    """Columns of words [w0, w1) of one row, whose column c < width is flat[base + c].
    Words past the mask's own are 0 (all masked); bits past `width` are ignored.

    Per word: -1 is skipped, 0 is a fill. A word with at most SPARSE_ZEROS masked columns (a
    mostly-allowed row, e.g. inside a JSON string) stores just those, so the untouched cache
    line of its 32 columns stays clean. Other words keep or replace every column branch-free,
    in a loop of run-time length (a fixed 32 gets unrolled into scalar code instead of
    vectorized); `select` picks the form LLVM vectorizes best (measured on AVX2): a select for
    32/64-bit lanes, and/or masks for 16-bit ones. Everything is indexed through views with
    counters from 0, so numba emits no negative-index wraparound in the loops."""
    row = flat[base : base + width]
    mask_words = mask[mask_row]
    covered = min(w1, mask_words.shape[0])
    if w0 < covered:
        words = mask_words[w0:covered]
        for i in range(words.shape[0]):
            word = words[i]
            if word == -1:
                continue
            start = (w0 + i) * 32
            seg = row[start : start + 32]  # shorter in the last word of a row
            if word == 0:
                seg[:] = neg
                continue
            n = seg.shape[0]
            zeros = ~np.int64(word) & 0xFFFFFFFF  # the masked columns' bits
            if n < 32:
                zeros &= (np.int64(1) << n) - 1
            if _popcount32(zeros) <= SPARSE_ZEROS:
                while zeros != 0:
                    lowest = zeros & -zeros
                    seg[_DEBRUIJN[((lowest * 0x077CB531) & 0xFFFFFFFF) >> 27]] = neg  # its bit index
                    zeros ^= lowest
            elif select:
                for j in range(n):
                    seg[j] = seg[j] if (word >> j) & 1 else neg
            else:
                for j in range(n):
                    keep = -((word >> j) & 1)  # all ones where allowed
                    seg[j] = (seg[j] & keep) | (neg & ~keep)
    uncovered = max(w0, mask_words.shape[0]) * 32
    if uncovered < w1 * 32:
        row[uncovered : w1 * 32] = neg


@numba.njit(cache=True, nogil=True, inline="always")
def _popcount32(x):  # pragma: no cover - numba
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    return ((((x + (x >> 4)) & 0x0F0F0F0F) * 0x01010101) & 0xFFFFFFFF) >> 24


@numba.njit(cache=True, nogil=True)
def _mask_rows(flat, row_stride, width, mask, rows_l, rows_m, neg, select):  # pragma: no cover - numba
    """Serial: every selected row in order, so a repeated row gets every mask that names it."""
    n_words = (width + 31) // 32
    for k in range(rows_l.shape[0]):
        _mask_words(flat, rows_l[k] * row_stride, width, mask, rows_m[k], 0, n_words, neg, select)


@numba.njit(parallel=True, cache=True, nogil=True)
def _mask_rows_parallel(flat, row_stride, width, mask, rows_l, rows_m, neg, select):  # pragma: no cover - numba
    """Parallel over (selected row, block of BLOCK_WORDS words); rows_l must not repeat a row."""
    n_words = (width + 31) // 32
    n_blocks = (n_words + BLOCK_WORDS - 1) // BLOCK_WORDS
    for task in numba.prange(rows_l.shape[0] * n_blocks):
        k = task // n_blocks
        w0 = (task - k * n_blocks) * BLOCK_WORDS
        w1 = min(w0 + BLOCK_WORDS, n_words)
        _mask_words(flat, rows_l[k] * row_stride, width, mask, rows_m[k], w0, w1, neg, select)
