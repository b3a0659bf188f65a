"""Truncation of temperature-scaled logits: top-k, then top-p, then min-p, per row.

Each step sees the distribution the previous one left, renormalized: top-p keeps the smallest
prefix of the sorted tokens whose probability reaches p (at least one token), min-p keeps the
tokens with probability >= min_p × the largest. Ties with the k-th value survive top-k (a value
cannot be both kept and dropped); the sort is stable, so top-p cuts ties by token id.
"""

from __future__ import annotations

from typing import Any, Sequence

from .sampling_params import SamplingParams


def truncate_(x: Any, rows: Sequence[SamplingParams]) -> None:
    """Set the logits each row's top-k / top-p / min-p drops to -inf, in place. x: (batch, width)."""
    import torch

    active = [i for i, p in enumerate(rows) if p.truncates]
    if not active:
        return
    idx_rows = torch.tensor(active, dtype=torch.long, device=x.device)
    sub = x[idx_rows]
    width = sub.shape[1]
    top_k = torch.tensor([rows[i].top_k if 0 < rows[i].top_k < width else width for i in active], device=x.device)
    top_p = torch.tensor([rows[i].top_p for i in active], dtype=torch.float32, device=x.device)
    min_p = torch.tensor([rows[i].min_p for i in active], dtype=torch.float32, device=x.device)

    values, order = torch.sort(sub, dim=1, descending=True, stable=True)
    kth = values.gather(1, (top_k - 1).unsqueeze(1))
    values = values.masked_fill(values < kth, float("-inf"))  # top-k (ties kept)
    probs = torch.softmax(values, dim=1)
    before = torch.cumsum(probs, dim=1) - probs  # mass of the tokens ranked above each one
    cut = (before >= top_p.unsqueeze(1)) & (top_p < 1).unsqueeze(1)  # rounding can pass 1.0
    cut[:, 0] = False  # top-p always keeps the most likely token
    values = values.masked_fill(cut, float("-inf"))
    probs = torch.softmax(values, dim=1)
    values = values.masked_fill(probs < min_p.unsqueeze(1) * probs[:, :1], float("-inf"))

    kept_sorted = torch.isfinite(values)
    kept = torch.zeros_like(kept_sorted).scatter_(1, order, kept_sorted)
    x[idx_rows] = sub.masked_fill(~kept, float("-inf"))
