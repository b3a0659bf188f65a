"""The acceptance rule (specdec/verify.py) on its own: for any target p and draft q, the first
emitted token is distributed exactly as p (enumerated, TV < 1e-12), with q known or not; greedy
verification uses no randomness; terminating drafts end the output; and the real randomness
source never draws a zero-probability index."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from toy_speculation import EnumeratingRandomness, exact_law

from constrain.specdec.randomness import TorchRandomness
from constrain.specdec.verify import accept_drafts

NEVER = lambda t: False  # noqa: E731 - nothing terminates


def distribution(draw, width: int) -> torch.Tensor:
    """A float32 probability vector with some exact zeros."""
    weights = draw(st.lists(st.sampled_from([0.0, 0.0, 0.05, 0.3, 1.0, 2.5]), min_size=width, max_size=width))
    if sum(weights) == 0:
        weights[draw(st.integers(0, width - 1))] = 1.0
    p = torch.tensor(weights, dtype=torch.float32)
    return p / p.sum()


@st.composite
def cases(draw):
    width = draw(st.integers(2, 6))
    gamma = draw(st.integers(1, 3))
    p = torch.stack([distribution(draw, width) for _ in range(gamma + 1)])
    q = torch.stack([distribution(draw, width) for _ in range(gamma)])
    return p, q


def first_token_law(p: torch.Tensor, q: torch.Tensor, known_q: bool) -> dict:
    """Exact law of the first emitted token when the draft tokens are drawn from q (the draft at
    position i from q[i]; p does not depend on the drafts here, so position 0 is the test)."""

    def run(rng):
        drafts = [rng.categorical(q[i]) for i in range(q.shape[0])]
        verdict = accept_drafts(p, drafts, list(q) if known_q else None, rng, terminates=NEVER)
        return verdict.tokens[0]

    return exact_law(run)


@settings(max_examples=60, deadline=None)
@given(cases(), st.booleans())
def test_the_first_emitted_token_is_distributed_as_p(case, known_q):
    p, q = case
    law = first_token_law(p, q, known_q)
    target = (p[0].double() / p[0].double().sum()).tolist()
    assert sum(abs(law.get(t, 0.0) - target[t]) for t in range(len(target))) / 2 < 1e-12


@settings(max_examples=30, deadline=None)
@given(cases())
def test_kept_drafts_then_one_token_and_counts_are_consistent(case):
    p, q = case
    gamma = q.shape[0]

    def run(rng):
        drafts = [rng.categorical(q[i]) for i in range(gamma)]
        v = accept_drafts(p, drafts, list(q), rng, terminates=NEVER)
        assert v.tokens[: v.accepted] == drafts[: v.accepted]
        assert len(v.tokens) == v.accepted + 1
        assert v.rejected == (v.accepted < gamma)
        return v.accepted

    law = exact_law(run)
    assert abs(sum(law.values()) - 1) < 1e-12


class NoRandomness:
    def categorical(self, probs):
        raise AssertionError("greedy verification drew a random number")

    def bernoulli(self, prob):
        raise AssertionError("greedy verification drew a random number")


def test_greedy_is_argmax_matching_without_randomness():
    p = torch.tensor([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=torch.float32)
    v = accept_drafts(p, [1, 2], None, NoRandomness(), terminates=NEVER, greedy=True)
    assert (v.tokens, v.accepted, v.rejected) == ([1, 2, 0], 2, False)
    v = accept_drafts(p, [1, 0], None, NoRandomness(), terminates=NEVER, greedy=True)
    assert (v.tokens, v.accepted, v.rejected) == ([1, 2], 1, True)


def test_a_kept_terminating_draft_ends_the_output():
    p = torch.tensor([[0, 1.0, 0], [0, 0, 1.0]])
    v = accept_drafts(p[:1], [1, 2], None, NoRandomness(), terminates=lambda t: t == 1, greedy=True)
    assert (v.tokens, v.accepted, v.rejected) == ([1], 1, False)


def test_missing_rows_and_impossible_drafts_are_named():
    p = torch.tensor([[0.5, 0.5]])
    with pytest.raises(ValueError, match="bonus position"):
        accept_drafts(p, [0], None, TorchRandomness(), terminates=NEVER, greedy=True)
    with pytest.raises(ValueError, match="probability 0 under its own q"):
        accept_drafts(torch.tensor([[0.5, 0.5], [1.0, 0]]), [1], [torch.tensor([1.0, 0])], TorchRandomness(), terminates=NEVER)


def test_torch_randomness_is_seeded_and_never_draws_probability_zero():
    probs = torch.tensor([0.0, 0.2, 0.0, 0.8, 0.0])
    draws = [TorchRandomness(torch.Generator().manual_seed(s)).categorical(probs) for s in range(400)]
    assert set(draws) <= {1, 3} and 40 < draws.count(1) < 130
    one = TorchRandomness(torch.Generator().manual_seed(5))
    two = TorchRandomness(torch.Generator().manual_seed(5))
    assert [one.categorical(probs) for _ in range(20)] == [two.categorical(probs) for _ in range(20)]
    rng = TorchRandomness(torch.Generator().manual_seed(1))
    assert rng.bernoulli(1.0) and not rng.bernoulli(0.0)
    assert 300 < sum(rng.bernoulli(0.4) for _ in range(1000)) < 500
    with pytest.raises(ValueError, match="sum to zero"):
        rng.categorical(torch.zeros(3))


def test_enumerating_randomness_replays_its_script():
    rng = EnumeratingRandomness([2, False])
    assert rng.categorical(torch.tensor([0.5, 0.0, 0.5])) == 2
    assert rng.bernoulli(0.25) is False
    assert rng.prob == pytest.approx(0.5 * 0.75)


# -- Monte Carlo on the real randomness path -------------------------------------------------------
# 6 bins (df 5), α = 1e-4: the critical value is 25.745. The alternative hardest to detect at total
# variation 0.01 has noncentrality n·(2·0.01)²; power 0.99 at df 5 needs noncentrality 51
# (simulated noncentral chi-square), so n = 51 / 4e-4 = 127,500 draws.
MC_DRAWS = 127_500
MC_CRITICAL = 25.745
MC_P = torch.tensor([[0.30, 0.05, 0.20, 0.15, 0.10, 0.20], [0.1, 0.2, 0.3, 0.1, 0.2, 0.1], [0.2] * 5 + [0.0]])
MC_Q = torch.tensor([[0.05, 0.40, 0.0, 0.25, 0.10, 0.20], [0.3, 0.0, 0.3, 0.2, 0.1, 0.1]])


def first_tokens_drawn(seed: int) -> torch.Tensor:
    """The drafter's draws come from their own generator, all at once (a drafter's randomness is
    independent of the verifier's); each verification draws from `rng` as in decoding."""
    rng = TorchRandomness(torch.Generator().manual_seed(seed))
    drafted = torch.multinomial(MC_Q, MC_DRAWS, replacement=True, generator=torch.Generator().manual_seed(seed + 1))
    q_rows = list(MC_Q)
    counts = [0] * MC_P.shape[1]
    for drafts in drafted.T.tolist():
        counts[accept_drafts(MC_P, drafts, q_rows, rng, terminates=NEVER).tokens[0]] += 1
    return torch.tensor(counts, dtype=torch.float64)


def chi_square(counts: torch.Tensor, p: torch.Tensor) -> float:
    expected = p.double() / p.double().sum() * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


@pytest.mark.slow
def test_monte_carlo_draws_pass_chi_square_and_a_biased_verifier_fails(monkeypatch):
    """127,500 verifications with real draws: the first emitted token follows p (chi-square at
    α = 1e-4). The same test on a verifier that redraws from p after a rejection (instead of
    max(0, p - q)) must reject."""
    from constrain.specdec import verify as verify_module

    assert chi_square(first_tokens_drawn(seed=1), MC_P[0]) < MC_CRITICAL
    monkeypatch.setattr(verify_module, "_residual", lambda p, q: p)
    assert chi_square(first_tokens_drawn(seed=1), MC_P[0]) > MC_CRITICAL
