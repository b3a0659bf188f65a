"""The shared bitmask layout and its torch reference application.

Layout (the one XGrammar and llguidance use, so engines can swap us in): int32 words, shape
(batch, ceil(V/32)); token t is bit t%32 (lowest first) of word t//32; 1 = allowed, so a row of
-1 allows everything. Faster backends (numba, Triton) are held to this reference in tests.
torch is imported on first use so that `import constrain` stays light.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence


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
    logits: Any, bitmask: Any, indices: Optional[Sequence[int]] = None
) -> None:
    """Set disallowed logits to -inf in place (torch reference implementation).

    logits: (batch, width) or (width,) float tensor; bitmask: (rows, words) or (words,) int32.
    Without `indices`, row i of the bitmask masks row i of the logits. With `indices`, only those
    logits rows are masked: by the bitmask row of the same number when the bitmask has as many
    rows as the logits (XGrammar's convention), else by bitmask row k for indices[k].
    Columns the bitmask does not cover (width > 32 * words) are masked."""
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
    width = logits2.shape[1]
    if indices is None:
        if mask2.shape[0] != logits2.shape[0]:
            raise ValueError(
                f"bitmask has {mask2.shape[0]} rows but logits have {logits2.shape[0]}; pass indices"
            )
        rows_l = torch.arange(logits2.shape[0], device=logits2.device)
        rows_m = rows_l.to(mask2.device)
    else:
        rows_l = torch.as_tensor(list(indices), dtype=torch.long, device=logits2.device)
        if rows_l.numel() and (rows_l.min() < 0 or rows_l.max() >= logits2.shape[0]):
            raise IndexError(f"indices out of range for {logits2.shape[0]} logits rows")
        if mask2.shape[0] == logits2.shape[0]:
            rows_m = rows_l.to(mask2.device)
        elif mask2.shape[0] == rows_l.numel():
            rows_m = torch.arange(rows_l.numel(), device=mask2.device)
        else:
            raise ValueError(
                f"bitmask has {mask2.shape[0]} rows: need one per logits row or one per index"
            )
    if rows_l.numel() == 0:
        return
    allowed = unpack_bitmask(mask2[rows_m], width).to(logits2.device)
    sub = logits2[rows_l]
    sub.masked_fill_(~allowed, float("-inf"))
    logits2[rows_l] = sub
