"""The sampling pipeline: mask → penalties → temperature → top-k → top-p → min-p → draw.

One call for a batch, with parameters per row. The order is the point: the grammar's mask comes
first, so truncation only ever chooses among legal tokens (masking after top-p can leave nothing
to draw). Every truncation step renormalizes over what the previous one kept, so top-p reads the
distribution after top-k, and min-p the one after top-p. Speculative decoding needs the exact
final distribution, so `return_probs=True` hands it back (one-hot for greedy rows).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from .sampling_params import SamplingParams, params_per_row

Generators = Union[None, Any, Sequence[Any]]


def sample(
    logits: Any,
    params: Union[SamplingParams, Sequence[SamplingParams]],
    *,
    bitmask: Any = None,
    history: Optional[Sequence[Sequence[int]]] = None,
    generator: Generators = None,
    return_probs: bool = False,
) -> Any:
    """Draw one token per row; returns the ids (a LongTensor (batch,)), or (ids, probs).

    logits: (batch, width) or (width,) floating tensor; it is not modified. bitmask: int32
    (batch, words) applied first (columns past its bits are masked). history: per row, the tokens
    generated so far (what the penalties count). generator: one torch.Generator for every row, or
    one per row (None entries use the row's `seed` if set, else torch's default generator).
    A row with `seed` and no generator gets a fresh generator seeded with it on every call: a
    decode loop that wants a reproducible stream keeps one generator per row and passes it."""
    import torch

    x, rows, squeeze = _prepare(logits, params, bitmask, history)
    ids = torch.empty(x.shape[0], dtype=torch.long, device=x.device)
    probs = torch.zeros_like(x) if return_probs else None
    g_rows, g_ids, s_rows, ps = _final_distributions(x, rows)
    if g_rows is not None:
        ids[g_rows] = g_ids
        if probs is not None:
            probs[g_rows, g_ids] = 1.0
    if s_rows is not None:
        ids[s_rows] = _draw(ps, s_rows.tolist(), rows, generator)
        if probs is not None:
            probs[s_rows] = ps
    if squeeze:
        ids = ids[0]
        probs = probs[0] if probs is not None else None
    return (ids, probs) if return_probs else ids


def probabilities(
    logits: Any,
    params: Union[SamplingParams, Sequence[SamplingParams]],
    *,
    bitmask: Any = None,
    history: Optional[Sequence[Sequence[int]]] = None,
) -> Any:
    """The distribution `sample` would draw each row from, without drawing: float32, the shape of
    `logits`, one-hot at the argmax for temperature-0 rows. Speculative decoding verifies drafts
    against exactly these vectors."""
    import torch

    x, rows, squeeze = _prepare(logits, params, bitmask, history)
    probs = torch.zeros_like(x)
    g_rows, g_ids, s_rows, ps = _final_distributions(x, rows)
    if g_rows is not None:
        probs[g_rows, g_ids] = 1.0
    if s_rows is not None:
        probs[s_rows] = ps
    return probs[0] if squeeze else probs


def _prepare(logits: Any, params: Any, bitmask: Any, history: Any) -> tuple[Any, list[SamplingParams], bool]:
    """A float32 copy of the logits with the mask and the penalties applied, the per-row params,
    and whether the input was one row (1-D)."""
    import torch

    from .bitmask import apply_token_bitmask_inplace

    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        raise TypeError("logits must be a floating-point torch tensor")
    squeeze = logits.dim() == 1
    x = (logits.unsqueeze(0) if squeeze else logits).to(torch.float32, copy=True)
    if x.dim() != 2:
        raise ValueError(f"logits must be 1-D or 2-D, got shape {tuple(logits.shape)}")
    rows = params_per_row(params, x.shape[0])
    if bitmask is not None:
        apply_token_bitmask_inplace(x, bitmask.unsqueeze(0) if bitmask.dim() == 1 else bitmask)
    _apply_penalties_(x, rows, history)
    _check_something_allowed(x)
    return x, rows, squeeze


def _final_distributions(x: Any, rows: list[SamplingParams]) -> tuple[Any, Any, Any, Any]:
    """Temperature and truncation: (greedy rows, their argmax ids, sampled rows, their
    probabilities); a part is None when no row is of its kind."""
    import torch

    from .truncation import truncate_

    temps = torch.tensor([p.temperature for p in rows], dtype=torch.float32, device=x.device)
    greedy = temps == 0
    g_rows = g_ids = s_rows = ps = None
    if bool(greedy.any()):
        g_rows = greedy.nonzero().flatten()
        g_ids = x[g_rows].argmax(dim=1)
    if not bool(greedy.all()):
        s_rows = (~greedy).nonzero().flatten()
        xs = x[s_rows] / temps[s_rows].unsqueeze(1)
        truncate_(xs, [rows[i] for i in s_rows.tolist()])
        ps = torch.softmax(xs, dim=1)
    return g_rows, g_ids, s_rows, ps


def _apply_penalties_(x: Any, rows: list[SamplingParams], history: Any) -> None:
    """Repetition (divide positive / multiply negative logits of seen tokens), presence (subtract
    once per seen token) and frequency (subtract per occurrence), over each row's history.
    Masked logits stay -inf whatever the penalty."""
    import torch

    active = [i for i, p in enumerate(rows) if p.has_penalties]
    if not active or history is None:
        return  # no penalties, or nothing generated yet for them to count
    if len(history) != x.shape[0]:
        raise ValueError(f"history has {len(history)} rows but logits have {x.shape[0]}")
    width = x.shape[1]
    row_of: list[int] = []
    tokens: list[int] = []
    for k, i in enumerate(active):
        seen = history[i].tolist() if hasattr(history[i], "tolist") else list(history[i])
        row_of.extend([k] * len(seen))
        tokens.extend(seen)
    if not tokens:
        return
    tok = torch.tensor(tokens, dtype=torch.long, device=x.device)
    if int(tok.min()) < 0 or int(tok.max()) >= width:
        raise ValueError(f"history holds a token id outside 0..{width - 1}")
    counts = torch.zeros((len(active), width), dtype=torch.float32, device=x.device)
    counts.index_put_(
        (torch.tensor(row_of, dtype=torch.long, device=x.device), tok),
        torch.ones(len(tokens), dtype=torch.float32, device=x.device),
        accumulate=True,
    )

    def column(name: str) -> Any:
        return torch.tensor([getattr(rows[i], name) for i in active], dtype=torch.float32, device=x.device).unsqueeze(1)

    idx = torch.tensor(active, dtype=torch.long, device=x.device)
    sub = x[idx]
    present = counts > 0
    rep = column("repetition_penalty")
    sub = torch.where(present, torch.where(sub > 0, sub / rep, sub * rep), sub)
    sub = sub - column("presence_penalty") * present.to(sub.dtype) - column("frequency_penalty") * counts
    x[idx] = sub


def _check_something_allowed(x: Any) -> None:
    """Every row needs a token to draw: its largest logit must be neither -inf nor NaN (the max
    propagates NaN, so one pass checks both)."""
    import torch

    top = x.amax(dim=1)
    dead = torch.isnan(top) | (top == float("-inf"))
    if bool(dead.any()):
        bad = dead.nonzero().flatten().tolist()
        raise ValueError(
            f"rows {bad[:8]}: no token can be drawn (every logit is -inf after the mask, or one is "
            "NaN); check the bitmask row and the logits"
        )


def _draw(probs: Any, row_ids: list[int], rows: list[SamplingParams], generator: Generators) -> Any:
    """Inverse-CDF draw per row (one uniform each; a float64 running sum, so a token of
    probability 0 is never drawn); rows that share a generator take their uniforms in one call."""
    import torch

    per_row = _generators_for(row_ids, rows, generator, probs.device)
    out = torch.empty(probs.shape[0], dtype=torch.long, device=probs.device)
    groups: dict[int, tuple[Any, list[int]]] = {}
    for k, g in enumerate(per_row):
        groups.setdefault(id(g), (g, []))[1].append(k)
    for g, ks in groups.values():
        picked = torch.tensor(ks, dtype=torch.long, device=probs.device)
        p = probs[picked]
        cdf = torch.cumsum(p, dim=1, dtype=torch.float64)
        u = torch.rand(len(ks), generator=g, dtype=torch.float64, device=probs.device)
        drawn = torch.searchsorted(cdf, (u * cdf[:, -1]).unsqueeze(1), right=True).flatten()
        # u * total can round up to the total: then the last token of positive probability
        last = p.shape[1] - 1 - (p > 0).flip(1).to(torch.uint8).argmax(dim=1)
        out[picked] = torch.minimum(drawn, last)
    return out


def _generators_for(
    row_ids: list[int], rows: list[SamplingParams], generator: Generators, device: Any
) -> list[Any]:
    import torch

    if generator is None or isinstance(generator, torch.Generator):
        given: list[Any] = [generator] * len(rows)
    else:
        given = list(generator)
        if len(given) != len(rows):
            raise ValueError(f"{len(given)} generators for {len(rows)} rows")
    result = []
    for i in row_ids:
        g = given[i]
        if g is None and rows[i].seed is not None:
            g = torch.Generator(device=device).manual_seed(rows[i].seed)
        result.append(g)
    return result
