"""Speculative-decoding planning math: the issue's worked numbers, properties against direct
sums and brute-force scans, and the adaptive GammaController's convergence."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from constrain.specdec.planning import (
    GammaController,
    accepted_per_drafted,
    best_gamma,
    expected_accepted,
    expected_tokens,
    speedup,
)

alphas = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
gammas = st.integers(min_value=0, max_value=40)
costs = st.floats(min_value=0.0, max_value=2.0, allow_nan=False)


# --- the numbers ---------------------------------------------------------------------


def test_expected_tokens_worked_examples():
    assert round(expected_tokens(0.7, 5), 2) == 2.94
    assert round(expected_tokens(0.8, 4), 2) == 3.36


def test_accepted_worked_example():
    assert round(expected_accepted(0.7, 5), 2) == 1.94
    assert round(accepted_per_drafted(0.7, 5), 2) == 0.39


def test_speedup_worked_examples():
    got = [speedup(0.7, g, 0.154) for g in range(1, 6)]
    # The figures are truncated, not rounded (γ=4 is 1.7160): hold them to 0.01, and the
    # exact values tightly.
    assert got == pytest.approx([1.47, 1.67, 1.73, 1.71, 1.66], abs=0.01)
    assert got == pytest.approx([1.4731, 1.6743, 1.7326, 1.7160, 1.6617], abs=5e-5)
    assert best_gamma(0.7, 0.154, max_gamma=5) == 3
    assert best_gamma(0.7, 0.154) == 3
    assert round(speedup(0.8, 4, 1 / 20), 2) == 2.80
    assert round(speedup(0.2, 4, 1 / 10), 2) == 0.89
    assert best_gamma(0.2, 0.1) <= 1


def test_limits_and_edges():
    assert expected_tokens(1.0, 7) == 8.0
    assert expected_tokens(0.0, 7) == 1.0
    assert expected_tokens(0.5, 0) == 1.0
    assert speedup(0.9, 0, 0.5, verify_cost=0.3) == 1.0
    # near alpha -> 1 the closed form must not cancel: compare with the sum
    for eps in (1e-6, 1e-9, 1e-12, 1e-15, 2.0**-53):
        a = 1.0 - eps
        direct = math.fsum(a**i for i in range(11))
        assert expected_tokens(a, 10) == pytest.approx(direct, rel=1e-12)
        assert expected_tokens(a, 10) <= 11.0


def test_verify_cost_lowers_speedup_and_gamma():
    assert speedup(0.8, 4, 0.05, verify_cost=0.1) == pytest.approx(expected_tokens(0.8, 4) / 1.6)
    assert best_gamma(0.8, 0.05, verify_cost=0.3) < best_gamma(0.8, 0.05)
    assert best_gamma(0.99, 0.0, verify_cost=1.0) == 0  # every position costs a full pass


def test_best_gamma_none_beats_one():
    assert best_gamma(0.0, 0.1) == 0
    assert best_gamma(0.0, 0.0) == 0  # all tie at 1: don't speculate
    assert best_gamma(0.9, 0.01, max_gamma=0) == 0
    assert best_gamma(1.0, 0.0, max_gamma=16) == 16


# --- properties --------------------------------------------------------------------------------


@given(alphas, gammas)
def test_expected_tokens_is_the_sum_and_bounded(a, g):
    e = expected_tokens(a, g)
    assert e == pytest.approx(math.fsum(a**i for i in range(g + 1)), rel=1e-9, abs=1e-12)
    assert 1.0 <= e <= g + 1


@given(alphas, alphas, gammas)
def test_expected_tokens_increasing_in_alpha(a1, a2, g):
    lo, hi = sorted((a1, a2))
    assert expected_tokens(lo, g) <= expected_tokens(hi, g) * (1 + 1e-12)


@given(alphas, gammas)
def test_expected_tokens_increasing_in_gamma(a, g):
    assert expected_tokens(a, g) <= expected_tokens(a, g + 1) * (1 + 1e-12)


@given(alphas, st.integers(min_value=1, max_value=40))
def test_accepted_per_drafted_in_unit_interval(a, g):
    r = accepted_per_drafted(a, g)
    assert -1e-12 <= r <= a + 1e-12  # later positions are tried less often than the first


@given(alphas, costs, costs, st.integers(min_value=0, max_value=24))
def test_best_gamma_is_brute_force_argmax(a, c, v, m):
    g = best_gamma(a, c, verify_cost=v, max_gamma=m)
    scan = [speedup(a, k, c, verify_cost=v) for k in range(m + 1)]
    assert 0 <= g <= m
    assert scan[g] == max(scan)
    if g == 0:
        assert all(s <= 1.0 for s in scan)
    else:
        assert scan[g] > 1.0
        assert all(s < scan[g] for s in scan[:g])  # smallest on ties


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: expected_tokens(1.5, 3), "alpha"),
        (lambda: expected_tokens(-0.1, 3), "alpha"),
        (lambda: expected_tokens(float("nan"), 3), "alpha"),
        (lambda: expected_tokens(0.5, -1), "gamma"),
        (lambda: expected_tokens(0.5, 2.0), "gamma"),
        (lambda: expected_tokens(0.5, True), "gamma"),
        (lambda: expected_accepted(2, 3), "alpha"),
        (lambda: accepted_per_drafted(0.5, 0), "gamma"),
        (lambda: speedup(0.5, 3, -0.1), "c"),
        (lambda: speedup(0.5, 3, float("inf")), "c"),
        (lambda: speedup(0.5, 3, 0.1, verify_cost=-1), "verify_cost"),
        (lambda: best_gamma(0.5, 0.1, max_gamma=-1), "max_gamma"),
        (lambda: best_gamma("0.5", 0.1), "alpha"),
        (lambda: GammaController(alpha0=1.2), "alpha0"),
        (lambda: GammaController(ema_weight=0), "ema_weight"),
        (lambda: GammaController(probe_every=0), "probe_every"),
        (lambda: GammaController().observe(3, 4, False), "accepted"),
        (lambda: GammaController().observe(3, 3, True), "stopped_by_rejection"),
        (lambda: GammaController().observe(-1, 0, False), "drafted"),
        (lambda: GammaController().observe_costs(target_seconds_1=0.0), "target_seconds_1"),
        (lambda: GammaController().observe_costs(verify_seconds=0.1), "positions"),
        (lambda: GammaController().observe_costs(verify_seconds=0.1, positions=0), "positions"),
        (lambda: GammaController().observe_costs(draft_seconds_per_token=-1.0), "draft_seconds"),
    ],
)
def test_invalid_arguments_raise(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_bad_observe_costs_changes_nothing():
    ctl = GammaController()
    with pytest.raises(ValueError):
        ctl.observe_costs(target_seconds_1=0.02, draft_seconds_per_token=0.001, verify_seconds=-1, positions=3)
    assert ctl.c == 0.1


# --- GammaController ---------------------------------------------------------------------------


def test_controller_warmup_keeps_speculating_from_prior():
    ctl = GammaController(alpha0=0.0, warmup=3)
    assert ctl.enabled
    assert ctl.gamma() == 1  # prior says off, but nothing observed yet
    for _ in range(3):
        ctl.observe(1, 0, True)
    assert not ctl.enabled


def test_controller_converges_on_accepted_drafts():
    ctl = GammaController(max_gamma=8)
    ctl.observe_costs(target_seconds_1=0.020, draft_seconds_per_token=0.001)
    for _ in range(50):
        g = ctl.gamma()
        assert g >= 1
        ctl.observe(g, g, False)
    assert ctl.alpha > 0.99
    assert ctl.c == pytest.approx(0.05)
    assert ctl.enabled
    assert ctl.gamma() == 8


def test_controller_turns_off_on_rejections_and_probes():
    ctl = GammaController(probe_every=8)
    for _ in range(20):
        ctl.observe_costs(
            target_seconds_1=0.020, draft_seconds_per_token=0.004, verify_seconds=0.021, positions=3
        )
        g = ctl.gamma()
        if g:
            ctl.observe(g, 0, True)
    assert ctl.alpha < 0.2
    assert ctl.verify_cost == pytest.approx(0.025)
    assert not ctl.enabled
    got = [ctl.gamma() for _ in range(24)]
    assert set(got) <= {0, 1}
    assert got.count(1) == 3
    ones = [i for i, g in enumerate(got) if g == 1]
    assert all(b - a == 8 for a, b in zip(ones, ones[1:]))


def test_controller_recovers_through_probes():
    ctl = GammaController(warmup=0)
    ctl.observe_costs(target_seconds_1=0.02, draft_seconds_per_token=0.002)
    for _ in range(30):
        ctl.observe(4, 0, True)
    assert not ctl.enabled
    for _ in range(200):
        g = ctl.gamma()
        if g:
            ctl.observe(g, g, False)
        if ctl.enabled:
            break
    assert ctl.enabled
    assert ctl.gamma() >= 1


def test_controller_alpha_is_per_position():
    # 3 accepted then a rejection: 4 positions tried, 3 accepted -> estimate moves toward 0.75
    ctl = GammaController(alpha0=0.75, ema_weight=0.5)
    ctl.observe(5, 3, True)
    assert ctl.alpha == pytest.approx(0.75)
    # all of 4 accepted, no rejection: 4 positions, all accepted -> toward 1
    ctl.observe(4, 4, False)
    assert ctl.alpha == pytest.approx(0.75 + (1 - 0.5**4) * 0.25)
    # nothing tried (drafted 0): no change, not counted
    n = ctl.observations
    ctl.observe(0, 0, False)
    assert ctl.observations == n


def test_controller_deterministic():
    def run():
        ctl = GammaController()
        out = []
        for i in range(60):
            g = ctl.gamma()
            out.append(g)
            if g:
                ctl.observe(g, (i * 7) % (g + 1) if i % 3 else 0, i % 3 == 0 or (i * 7) % (g + 1) < g)
            ctl.observe_costs(target_seconds_1=0.01 + 0.001 * (i % 5), draft_seconds_per_token=0.002)
        return out

    assert run() == run()
