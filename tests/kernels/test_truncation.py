"""top-k → top-p → min-p against a float64 oracle written from the definitions."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from constrain.kernels import SamplingParams
from constrain.kernels.truncation import truncate_


def kept_oracle(logits: np.ndarray, p: SamplingParams) -> tuple[set[int], float]:
    """The surviving token ids, and the smallest distance of a decision to its threshold."""
    order = sorted(range(len(logits)), key=lambda i: (-logits[i], i))
    vals = logits[order].astype(np.float64)
    keep = np.isfinite(vals)
    margin = np.inf
    if 0 < p.top_k < len(vals):
        kth = vals[p.top_k - 1]
        keep &= vals >= kth
    if p.top_p < 1:
        w = np.where(keep, np.exp(vals - vals[0]), 0.0)
        probs = w / w.sum()
        before = np.cumsum(probs) - probs
        margin = min(margin, float(np.min(np.abs(before[keep] - p.top_p))))
        cut = before >= p.top_p
        cut[0] = False
        keep &= ~cut
    if p.min_p > 0:
        w = np.where(keep, np.exp(vals - vals[0]), 0.0)
        probs = w / w.sum()
        threshold = p.min_p * probs[0]
        margin = min(margin, float(np.min(np.abs(probs[keep] - threshold))))
        keep &= probs >= threshold
    return {order[j] for j in range(len(vals)) if keep[j]}, margin


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(-8, 8, allow_nan=False, width=32) | st.sampled_from([0.0, 1.0, -np.inf]), min_size=1, max_size=40),
    st.integers(0, 45),
    st.floats(0.05, 1.0),
    st.floats(0.0, 0.6),
    st.sampled_from([1, 3, 8, 1024]),
)
def test_kept_sets_equal_the_oracle(values, top_k, top_p, min_p, candidates):
    """Small candidate counts drive rows through both paths: decided among the candidates, and
    the full sort where the candidates' mass or a tie run leaves the cut open."""
    logits = np.array(values, dtype=np.float32)
    assume(np.isfinite(logits).any())
    p = SamplingParams(top_k=top_k, top_p=top_p, min_p=min_p)
    want, margin = kept_oracle(logits, p)
    assume(margin > 1e-5)  # float32 and float64 may round a borderline token either way
    x = torch.tensor(logits).unsqueeze(0)
    truncate_(x, [p], candidates=candidates)
    got = set(torch.isfinite(x[0]).nonzero().flatten().tolist())
    assert got == want
    assert torch.equal(x[0][sorted(got)], torch.tensor(logits)[sorted(got)])  # survivors untouched


def test_ties_with_the_kth_value_survive_top_k():
    x = torch.tensor([[3.0, 1.0, 3.0, 3.0, 0.0]])
    truncate_(x, [SamplingParams(top_k=2)])
    assert torch.isfinite(x[0]).tolist() == [True, False, True, True, False]


def test_rows_keep_their_own_parameters():
    x = torch.tensor([[2.0, 1.0, 0.0], [2.0, 1.0, 0.0], [2.0, 1.0, 0.0]])
    truncate_(x, [SamplingParams(top_k=1), SamplingParams(), SamplingParams(top_p=0.85)])
    assert torch.isfinite(x).tolist() == [[True, False, False], [True, True, True], [True, True, False]]


def test_top_p_one_never_drops_the_tail():
    x = torch.cat([torch.tensor([[40.0]]), torch.full((1, 5000), -40.0)], dim=1)
    truncate_(x, [SamplingParams(top_p=1.0, top_k=6000)])
    assert torch.isfinite(x).all()


def test_a_top_p_that_rounds_to_one_in_float32_keeps_every_token():
    """(Found by the property test above: top_p 0.9999999999999999 is 1.0 in float32; the row
    was taken as decided by its one candidate and lost the other token.)"""
    x = torch.tensor([[0.0, 1.0]])
    truncate_(x, [SamplingParams(top_p=0.9999999999999999)], candidates=1)
    assert torch.isfinite(x[0]).tolist() == [True, True]


def test_a_top_p_below_one_in_float64_logits_still_truncates():
    """(top-p is judged in the logits' own dtype: in float64, 0.9999999999999999 is below 1.)"""
    x = torch.tensor([[0.0, 40.0]], dtype=torch.float64)
    truncate_(x, [SamplingParams(top_p=0.9999999999999999)], candidates=1)
    assert torch.isfinite(x[0]).tolist() == [False, True]
