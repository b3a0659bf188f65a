"""Truncation of temperature-scaled logits: top-k, then top-p, then min-p, per row.

Each step sees the distribution the previous one left, renormalized: top-p keeps the smallest
prefix of the sorted tokens whose probability reaches p (at least one token), min-p keeps the
tokens with probability >= min_p × the largest. Ties with the k-th value survive top-k (a value
cannot be both kept and dropped); tokens of equal value are ranked by id, so top-p cuts ties the
same way every time.

Sorting 128k logits costs ~14 ms on a CPU; the cut almost always falls among the few hundred
most likely tokens, so rows look at the `candidates` largest first (torch.topk) and fall back to
the full sort only where those cannot decide (their mass stays below top_p, or equal values
run on past them). min-p needs no order at all: p_i >= min_p × p_max is
x_i >= x_max + log(min_p) on the logits.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .sampling_params import SamplingParams

CANDIDATES = 1024


def truncate_(x: Any, rows: Sequence[SamplingParams], *, candidates: int = CANDIDATES) -> None:
    """Set the logits each row's top-k / top-p / min-p drops to -inf, in place. x: (batch, width)."""
    import torch

    width = x.shape[1]
    # top-p is on where top_p < 1 in x's dtype, as the kernels below compare it (0.9999999999999999
    # is 1.0 in float32: taken as on, the row would be "decided" by its candidates alone and
    # lose every other token)
    top_p_on = (torch.tensor([p.top_p for p in rows], dtype=x.dtype) < 1).tolist()
    ordered = [i for i, p in enumerate(rows) if 0 < p.top_k < width or top_p_on[i]]
    if ordered:
        idx = torch.tensor(ordered, dtype=torch.long, device=x.device)
        x[idx] = _top_k_top_p(x[idx], [rows[i] for i in ordered], candidates)
    relative = [i for i, p in enumerate(rows) if p.min_p > 0]
    if relative:
        idx = torch.tensor(relative, dtype=torch.long, device=x.device)
        sub = x[idx]
        log_min_p = torch.tensor([math.log(rows[i].min_p) for i in relative], dtype=sub.dtype, device=x.device)
        floor = sub.max(dim=1, keepdim=True).values + log_min_p.unsqueeze(1)
        x[idx] = sub.masked_fill(sub < floor, float("-inf"))


def _top_k_top_p(sub: Any, rows: list[SamplingParams], candidates: int) -> Any:
    """Rows of `sub` with top-k then top-p applied (a new tensor)."""
    import torch

    width = sub.shape[1]
    top_k = [p.top_k if 0 < p.top_k < width else 0 for p in rows]
    k_cand = min(width, max([candidates] + [k + 1 for k in top_k]))
    if k_cand == width:
        return _by_full_sort(sub, rows)
    values, ids = _ranked_top(sub, k_cand)
    ks = torch.tensor([k if k else k_cand for k in top_k], device=sub.device)
    kth = values.gather(1, (ks - 1).unsqueeze(1))
    has_k = torch.tensor([k > 0 for k in top_k], device=sub.device)
    # values equal to the last candidate's may lie past the candidates, and ids rank ties: the
    # candidates decide only if they hold that whole tie group (-inf never matters: it is dropped)
    last = values[:, -1:]
    open_tie = torch.isfinite(last[:, 0]) & ((sub == last).sum(dim=1) > (values == last).sum(dim=1))
    keep = (values >= kth) | ~has_k.unsqueeze(1)
    kept_values = values.masked_fill(~keep, float("-inf"))
    # probabilities of the candidates: over the top-k set (complete when has_k), else over the row
    norm = torch.where(has_k, torch.logsumexp(kept_values, dim=1), torch.logsumexp(sub, dim=1))
    probs = torch.exp(kept_values - norm.unsqueeze(1))
    top_p = torch.tensor([p.top_p for p in rows], dtype=probs.dtype, device=sub.device)
    keep &= ~_top_p_cut(probs, top_p)
    mass = probs.sum(dim=1)
    undecided = open_tie | (~has_k & (top_p < 1) & (mass < top_p))
    out = torch.full_like(sub, float("-inf")).scatter_(1, ids, values.masked_fill(~keep, float("-inf")))
    if bool(undecided.any()):
        bad = undecided.nonzero().flatten()
        out[bad] = _by_full_sort(sub[bad], [rows[i] for i in bad.tolist()])
    return out


def _ranked_top(sub: Any, k: int) -> tuple[Any, Any]:
    """The k largest logits per row, by value descending and, among equal values, by id."""
    import torch

    values, ids = torch.topk(sub, k, dim=1, sorted=True)
    by_id = torch.argsort(ids, dim=1)
    values, ids = values.gather(1, by_id), ids.gather(1, by_id)
    order = torch.sort(values, dim=1, descending=True, stable=True).indices
    return values.gather(1, order), ids.gather(1, order)


def _by_full_sort(sub: Any, rows: list[SamplingParams]) -> Any:
    """top-k then top-p over a full stable sort of each row (the reference path)."""
    import torch

    width = sub.shape[1]
    top_k = torch.tensor([p.top_k if 0 < p.top_k < width else width for p in rows], device=sub.device)
    top_p = torch.tensor([p.top_p for p in rows], dtype=sub.dtype, device=sub.device)
    values, order = torch.sort(sub, dim=1, descending=True, stable=True)
    kth = values.gather(1, (top_k - 1).unsqueeze(1))
    values = values.masked_fill(values < kth, float("-inf"))
    values = values.masked_fill(_top_p_cut(torch.softmax(values, dim=1), top_p), float("-inf"))
    return torch.full_like(sub, float("-inf")).scatter_(1, order, values)


def _top_p_cut(probs: Any, top_p: Any) -> Any:
    """Over probabilities sorted descending: True where the mass ranked above already reaches
    top_p (never the first token; never where top_p is 1, which rounding could pass)."""
    import torch

    before = torch.cumsum(probs, dim=1) - probs
    cut = (before >= top_p.unsqueeze(1)) & (top_p < 1).unsqueeze(1)
    cut[:, 0] = False
    return cut
