"""The sampling pipeline: the seed example, the order of the steps, penalties, and the draws'
distribution against an analytic one (chi-square)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from constrain.kernels import SamplingParams, allocate_token_bitmask, probabilities, sample


def bitmask_allowing(rows: list[list[int]], width: int) -> torch.Tensor:
    words = np.zeros((len(rows), (width + 31) // 32), dtype=np.uint32)
    for r, ids in enumerate(rows):
        for t in ids:
            words[r, t // 32] |= np.uint32(1 << (t % 32))
    return torch.from_numpy(words.view(np.int32))


def test_seed_example():
    logits = torch.tensor([2.0, 1.0, 0.0])
    _, p1 = sample(logits, SamplingParams(temperature=1.0), return_probs=True)
    assert [round(v, 3) for v in p1.tolist()] == [0.665, 0.245, 0.090]
    _, p05 = sample(logits, SamplingParams(temperature=0.5), return_probs=True)
    assert [round(v, 3) for v in p05.tolist()] == [0.867, 0.117, 0.016]
    _, k1 = sample(logits, SamplingParams(temperature=1.0, top_p=0.85), return_probs=True)
    assert int((k1 > 0).sum()) == 2
    _, k05 = sample(logits, SamplingParams(temperature=0.5, top_p=0.85), return_probs=True)
    assert int((k05 > 0).sum()) == 1
    rows = allocate_token_bitmask(256, 128_256)
    assert rows[0].numel() * rows.element_size() == 16_032
    assert rows.numel() * rows.element_size() == 4_104_192  # 256 rows: 4.1 MB


def test_mask_comes_before_truncation():
    """Token 0 holds almost all the mass but is illegal; top-p 0.5 applied before the mask would
    keep only token 0 and leave nothing legal to draw."""
    logits = torch.tensor([[12.0, 1.0, 0.5, 0.0, -1.0]])
    mask = bitmask_allowing([[2, 3]], 5)
    params = SamplingParams(temperature=1.0, top_p=0.5)
    for seed in range(20):
        ids, probs = sample(logits, params, bitmask=mask, generator=torch.Generator().manual_seed(seed), return_probs=True)
        assert int(ids[0]) == 2  # the most likely legal token covers top-p 0.5 alone
    assert probs[0].tolist() == [0.0, 0.0, 1.0, 0.0, 0.0]
    ids, probs = sample(logits, SamplingParams(), bitmask=mask, return_probs=True)
    assert int(ids[0]) in (2, 3) and probs[0, [0, 1, 4]].sum() == 0
    assert math.isclose(float(probs[0, 2]), 1 / (1 + math.exp(-0.5)), rel_tol=1e-6)


def test_greedy_takes_the_legal_argmax_and_reports_one_hot():
    logits = torch.tensor([[5.0, 4.0, 3.0, 9.0], [0.0, 1.0, 2.0, 3.0]])
    mask = bitmask_allowing([[1, 2], [0, 1, 2, 3]], 4)
    ids, probs = sample(logits, SamplingParams(temperature=0), bitmask=mask, return_probs=True)
    assert ids.tolist() == [1, 3]
    assert probs.tolist() == [[0, 1, 0, 0], [0, 0, 0, 1]]


def test_probabilities_are_what_sample_draws_from():
    """`probabilities` (speculative decoding's p) equals sample's returned distribution, row by
    row, for mixed greedy and sampled rows with penalties and truncation."""
    torch.manual_seed(0)
    logits = torch.randn(3, 70)
    mask = bitmask_allowing([list(range(0, 70, 2)), list(range(10, 50)), [5, 6, 7]], 70)
    params = [
        SamplingParams(temperature=0.8, top_k=9, top_p=0.9, repetition_penalty=1.3),
        SamplingParams(temperature=0),
        SamplingParams(temperature=1.5, min_p=0.05, frequency_penalty=0.4),
    ]
    history = [[2, 4, 4], [11, 12], [6]]
    _, drawn_from = sample(logits, params, bitmask=mask, history=history, return_probs=True)
    p = probabilities(logits, params, bitmask=mask, history=history)
    assert torch.equal(p, drawn_from)
    assert torch.equal(probabilities(logits[1], params[1], bitmask=mask[1], history=[history[1]]), p[1])


def test_logits_are_left_unchanged_and_any_float_dtype_works():
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        logits = torch.randn(3, 50).to(dtype)
        before = logits.clone()
        sample(logits, SamplingParams(top_k=5), bitmask=bitmask_allowing([[1, 2], [3], [4, 40]], 50))
        assert torch.equal(logits, before)


def test_penalties_follow_their_definitions():
    logits = torch.tensor([[2.0, -2.0, 1.0, 0.5, 3.0]])
    mask = bitmask_allowing([[0, 1, 2, 3]], 5)  # token 4 masked, and in the history
    history = [[0, 1, 1, 4, 2, 2, 2]]
    params = SamplingParams(temperature=1.0, repetition_penalty=2.0, presence_penalty=0.25, frequency_penalty=0.1)
    _, probs = sample(logits, params, bitmask=mask, history=history, return_probs=True)
    expected_logits = torch.tensor([
        2.0 / 2 - 0.25 - 0.1,  # seen once, positive: divided
        -2.0 * 2 - 0.25 - 0.2,  # seen twice, negative: multiplied
        1.0 / 2 - 0.25 - 0.3,  # seen three times
        0.5,  # never seen
        -math.inf,  # masked stays masked
    ])
    assert torch.allclose(probs[0], torch.softmax(expected_logits, dim=0), atol=1e-6)
    # a row without penalties ignores its history
    _, plain = sample(logits, SamplingParams(), bitmask=mask, history=history, return_probs=True)
    assert torch.allclose(plain[0], torch.softmax(torch.tensor([2.0, -2.0, 1.0, 0.5, -math.inf]), dim=0))


def test_seeds_reproduce_and_rows_draw_independently():
    logits = torch.zeros(4, 1000)
    a = sample(logits, SamplingParams(seed=7))
    b = sample(logits, SamplingParams(seed=7))
    assert torch.equal(a, b) and len(set(a.tolist())) == 1  # each row: a fresh generator, seed 7
    g1, g2 = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    c = sample(logits, SamplingParams(), generator=g1)
    d = sample(logits, SamplingParams(), generator=g2)
    assert torch.equal(c, d) and len(set(c.tolist())) > 1  # one generator drawn row after row
    per_row = [torch.Generator().manual_seed(s) for s in (3, 4, 3, 4)]
    e = sample(logits, SamplingParams(), generator=per_row)
    assert e[0] == e[2] and e[1] == e[3]


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"rows \[1\]: no token can be drawn"):
        sample(torch.zeros(2, 40), SamplingParams(), bitmask=bitmask_allowing([[3], []], 40))
    with pytest.raises(ValueError, match=r"rows \[0\]: no token can be drawn"):
        sample(torch.tensor([[0.0, float("nan"), 1.0]]), SamplingParams(temperature=0))
    with pytest.raises(ValueError, match="3 SamplingParams for a batch of 2"):
        sample(torch.zeros(2, 5), [SamplingParams()] * 3)
    with pytest.raises(TypeError, match="floating-point"):
        sample(torch.zeros(2, 5, dtype=torch.long), SamplingParams())
    with pytest.raises(ValueError, match="history holds a token id outside"):
        sample(torch.zeros(1, 5), SamplingParams(presence_penalty=1.0), history=[[5]])
    with pytest.raises(ValueError, match="2 generators for 1 rows"):
        sample(torch.zeros(1, 5), SamplingParams(), generator=[None, None])


def analytic(logits: np.ndarray, allowed: list[int], history: list[int], p: SamplingParams) -> np.ndarray:
    """The pipeline's distribution, in float64, written from the definitions."""
    x = np.full(len(logits), -np.inf)
    x[allowed] = logits[allowed]
    counts = np.bincount(history, minlength=len(logits)).astype(np.float64)
    seen = counts > 0
    fin = np.isfinite(x)
    rep = np.where(x > 0, x / p.repetition_penalty, x * p.repetition_penalty)
    x = np.where(seen & fin, rep, x)
    x = np.where(fin, x - p.presence_penalty * seen - p.frequency_penalty * counts, x)
    x = x / p.temperature
    order = sorted(range(len(x)), key=lambda i: (-x[i], i))
    keep = np.isfinite(x)
    if p.top_k:
        keep &= x >= x[order[p.top_k - 1]]
    w = np.where(keep, np.exp(x - x[order[0]]), 0.0)
    probs = w / w.sum()
    mass = 0.0
    for i in order:
        if mass >= p.top_p and i != order[0]:
            keep[i] = False
        mass += probs[i]
    w = np.where(keep, w, 0.0)
    probs = w / w.sum()
    keep &= probs >= p.min_p * probs.max()
    w = np.where(keep, w, 0.0)
    return w / w.sum()


def chi_square_p_value(observed: np.ndarray, expected: np.ndarray) -> float:
    stat = float(((observed - expected) ** 2 / expected).sum())
    dof = len(expected) - 1
    return float(torch.special.gammaincc(torch.tensor(dof / 2, dtype=torch.float64), torch.tensor(stat / 2, dtype=torch.float64)))


@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(temperature=1.0),
        SamplingParams(temperature=0.7, top_k=6, top_p=0.95, min_p=0.02, repetition_penalty=1.3, presence_penalty=0.2, frequency_penalty=0.15),
        SamplingParams(temperature=1.6, top_p=0.8),
        SamplingParams(temperature=0.9, min_p=0.1, frequency_penalty=0.4),
    ],
)
def test_100k_draws_match_the_analytic_distribution(params):
    rng = np.random.default_rng(11)
    width = 45
    logits = rng.normal(0, 1.5, size=width).astype(np.float32)
    allowed = sorted(rng.choice(width, size=14, replace=False).tolist())
    history = [int(t) for t in rng.choice(width, size=12)]
    want = analytic(logits.astype(np.float64), allowed, history, params)
    n = 100_000
    ids = sample(
        torch.from_numpy(logits).expand(n, width),
        params,
        bitmask=bitmask_allowing([allowed], width).expand(n, -1),
        history=[history] * n,
        generator=torch.Generator().manual_seed(5),
    )
    observed = np.bincount(ids.numpy(), minlength=width)
    assert observed[want == 0].sum() == 0  # masked or truncated tokens are never drawn
    support = want > 0
    assert support.sum() >= 2
    p_value = chi_square_p_value(observed[support].astype(np.float64), n * want[support])
    assert p_value > 1e-4, (p_value, observed[support], n * want[support])
