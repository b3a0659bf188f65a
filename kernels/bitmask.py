"""The shared bitmask layout, argument validation, and the dispatch to an application backend.

Layout (the one XGrammar and llguidance use, so engines can swap us in): int32 words, shape
(batch, ceil(V/32)); token t is bit t%32 (lowest first) of word t//32; 1 = allowed, so a row of
-1 allows everything.

Backends (each in its own module, imported on first use so that `import constrain` stays light):
"torch" (bitmask_torch.py) is the reference the others are tested against bit for bit; "numba"
(bitmask_numba.py) is the multi-threaded CPU kernel; "triton" (bitmask_triton.py) the GPU kernel.
Validation happens once here, so every backend sees the same checked rows.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any, Optional, Sequence

BACKENDS: tuple[str, ...] = ("torch", "numba", "triton")

_modules: dict[str, Any] = {}
_import_errors: dict[str, str] = {}


def bitmask_words(vocab_size: int) -> int:
    """Words per row for a vocabulary (or logits) width."""
    return (int(vocab_size) + 31) // 32


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> Any:
    """A (batch_size, ceil(vocab_size/32)) int32 torch tensor, all bits set (everything allowed)."""
    import torch

    if batch_size <= 0 or vocab_size <= 0:
        raise ValueError(f"batch_size and vocab_size must be positive, got {batch_size}, {vocab_size}")
    return torch.full((batch_size, bitmask_words(vocab_size)), -1, dtype=torch.int32)


def unpack_bitmask(bitmask: Any, width: int) -> Any:
    """Bool tensor (rows, width): True where allowed. Columns past the mask's bits are False."""
    import torch

    rows, words = bitmask.shape
    shifts = torch.arange(32, device=bitmask.device, dtype=torch.int32)
    bits = ((bitmask.unsqueeze(-1) >> shifts) & 1).bool().reshape(rows, words * 32)
    if width <= words * 32:
        return bits[:, :width]
    pad = torch.zeros((rows, width - words * 32), dtype=torch.bool, device=bitmask.device)
    return torch.cat([bits, pad], dim=1)


def apply_token_bitmask_inplace(
    logits: Any, bitmask: Any, indices: Optional[Sequence[int]] = None, *, backend: Optional[str] = None
) -> None:
    """Set disallowed logits to -inf in place.

    logits: (batch, width) or (width,) float tensor; bitmask: (rows, words) or (words,) int32.
    Without `indices`, row i of the bitmask masks row i of the logits. With `indices`, only those
    logits rows are masked: by the bitmask row of the same number when the bitmask has as many
    rows as the logits (XGrammar's convention), else by bitmask row k for indices[k] (a row named
    twice gets both masks). Columns the bitmask does not cover (width > 32 * words) are masked.

    backend: "torch", "numba" or "triton"; None picks triton for CUDA tensors (when triton
    imports), numba for CPU tensors, torch otherwise. Every backend gives the same bits."""
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"unknown bitmask backend {backend!r}; choose one of {_choices()}")
    logits2, mask2, rows_l, rows_m = _validate(logits, bitmask, indices)
    name = resolve_backend(logits2, backend)
    if (logits2.shape[0] if rows_l is None else rows_l.numel()) == 0:
        return
    if name != "torch" and logits2.requires_grad:
        logits2 = logits2.detach()  # under no_grad (resolve_backend refused tensors autograd tracks)
    _module(name).apply_rows(logits2, mask2, rows_l, rows_m)


def resolve_backend(logits: Any, backend: Optional[str] = None) -> str:
    """The backend that will mask `logits`: `backend` itself if it can run on them, else ValueError;
    for None, the automatic choice."""
    import torch

    if backend is None:
        if logits.requires_grad and torch.is_grad_enabled():
            return "torch"  # the only backend autograd sees
        if logits.device.type == "cuda" and _usable("triton", logits) is None:
            return "triton"
        if logits.device.type == "cpu" and _usable("numba", logits) is None:
            return "numba"
        return "torch"
    if backend not in BACKENDS:
        raise ValueError(f"unknown bitmask backend {backend!r}; choose one of {_choices()}")
    if backend != "torch" and logits.requires_grad and torch.is_grad_enabled():
        raise ValueError(
            f"bitmask backend {backend!r} writes behind autograd's back and these logits require grad; "
            f"use backend='torch' or torch.no_grad() (choices: {_choices()})"
        )
    reason = _usable(backend, logits)
    if reason is not None:
        raise ValueError(f"bitmask backend {backend!r} cannot run here: {reason}; choose one of {_choices()}")
    return backend


@functools.lru_cache(maxsize=None)
def integer_view(dtype: Any) -> Any:
    """The same-width integer dtype the fast backends view `dtype` logits as, or None if they
    do not take it. Why: storing -inf's bits as integers makes one kernel serve every float dtype
    and leaves nothing to rounding."""
    import torch

    return {
        torch.float32: torch.int32,
        torch.float16: torch.int16,
        torch.bfloat16: torch.int16,
        torch.float64: torch.int64,
    }.get(dtype)


@functools.lru_cache(maxsize=None)
def neg_inf_bits(dtype: Any) -> int:
    """-inf's bit pattern in `dtype`, as the signed integer of integer_view(dtype) (fp32 0xFF800000,
    fp16 0xFC00, bf16 0xFF80: what masked_fill_(-inf) stores)."""
    import torch

    return int(torch.tensor([float("-inf")], dtype=dtype).view(integer_view(dtype))[0])


def _choices() -> str:
    return ", ".join(repr(b) for b in BACKENDS) + " or None (automatic)"


def _usable(name: str, logits: Any) -> Optional[str]:
    """None when backend `name` can mask `logits`, else why not. Imports the backend on first use,
    except triton for tensors it could never run on (importing triton takes a while)."""
    if name == "triton" and logits.device.type == "cpu":
        from os import environ

        if environ.get("TRITON_INTERPRET", "0").lower() not in ("1", "true", "on", "yes"):
            return "triton runs on CUDA tensors (or on CPU tensors under TRITON_INTERPRET=1), these are on cpu"
    module = _module(name, required=False)
    if module is None:
        return f"{name} does not import ({_import_errors[name]})"
    return module.unusable_reason(logits)


def _module(name: str, required: bool = True) -> Any:
    if name not in _modules and name not in _import_errors:
        try:
            _modules[name] = importlib.import_module(f".bitmask_{name}", __package__)
        except Exception as exc:  # ImportError, or a native library failing to load
            _import_errors[name] = f"{type(exc).__name__}: {exc}"
    if name in _modules:
        return _modules[name]
    if required:
        raise ImportError(f"bitmask backend {name!r} does not import: {_import_errors[name]}")
    return None


def _validate(logits: Any, bitmask: Any, indices: Optional[Sequence[int]]) -> tuple[Any, Any, Any, Any]:
    """(logits 2-D, bitmask 2-D, logits rows, bitmask rows): the rows as CPU int64 tensors, in range,
    or both None for "every row, by the mask row of the same number" (no indices)."""
    import torch

    if not isinstance(logits, torch.Tensor) or not isinstance(bitmask, torch.Tensor):
        raise TypeError("logits and bitmask must be torch tensors")
    if bitmask.dtype != torch.int32:
        raise TypeError(f"bitmask must be int32, got {bitmask.dtype}")
    if not logits.is_floating_point():
        raise TypeError(f"logits must be floating point, got {logits.dtype}")
    logits2 = logits.unsqueeze(0) if logits.dim() == 1 else logits
    mask2 = bitmask.unsqueeze(0) if bitmask.dim() == 1 else bitmask
    if logits2.dim() != 2 or mask2.dim() != 2:
        raise ValueError("logits and bitmask must be 1-D or 2-D")
    n_logits, n_mask = logits2.shape[0], mask2.shape[0]
    if indices is None:
        if n_mask != n_logits:
            raise ValueError(f"bitmask has {n_mask} rows but logits have {n_logits}; pass indices")
        return logits2, mask2, None, None
    rows_l = _index_rows(indices)
    if rows_l.dim() != 1:  # the reference failed later on these, with a less clear message
        raise ValueError(f"indices must be a flat sequence of logits row numbers, got shape {tuple(rows_l.shape)}")
    if rows_l.numel() and (rows_l.min() < 0 or rows_l.max() >= n_logits):
        raise IndexError(f"indices out of range for {n_logits} logits rows")
    if n_mask == n_logits:
        rows_m = rows_l
    elif n_mask == rows_l.numel():
        rows_m = torch.arange(rows_l.numel())
    else:
        raise ValueError(f"bitmask has {n_mask} rows: need one per logits row or one per index")
    return logits2, mask2, rows_l, rows_m


def _index_rows(indices: Any) -> Any:
    """`indices` as a CPU int64 tensor, as torch.as_tensor(list(indices), dtype=long) makes it;
    1-D integer tensors skip the per-element list."""
    import torch

    integer = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
    if isinstance(indices, torch.Tensor) and indices.dim() == 1 and indices.dtype in integer:
        return indices.to(device="cpu", dtype=torch.long).contiguous()
    return torch.as_tensor(list(indices), dtype=torch.long)
