"""SpecMetrics: per-position α, accepted/drafted, mean acceptance length, forced tokens."""

from __future__ import annotations

import pytest

from constrain.specdec.metrics import SpecMetrics


def test_figures_follow_their_definitions():
    m = SpecMetrics()
    m.observe([True, True, False, False], accepted=3, rejected=True, emitted=4)  # 2 forced kept, 1 drafted kept, 1 rejected
    m.observe([], accepted=0, rejected=False, emitted=1)  # a pass without drafts
    m.observe([False, False], accepted=2, rejected=False, emitted=3)  # all kept, plus the bonus
    assert m.target_passes == 3 and m.emitted == 8
    assert (m.drafted, m.accepted, m.tried) == (6, 5, 6)
    assert m.alpha == pytest.approx(5 / 6)
    assert m.accepted_per_drafted == pytest.approx(5 / 6)
    assert m.mean_acceptance_length == pytest.approx(8 / 3)
    assert (m.forced_drafted, m.forced_tokens) == (2, 2)
    line = m.log_line()
    assert "8 tokens in 3 target passes" in line and "3/4(f2)" in line and "2/2" in line


def test_untried_drafts_count_as_drafted_not_as_tried():
    m = SpecMetrics()
    m.observe([False] * 5, accepted=1, rejected=True, emitted=2)
    assert m.alpha == pytest.approx(0.5)  # 1 kept of the 2 positions tried
    assert m.accepted_per_drafted == pytest.approx(0.2)  # 1 kept of 5 drafted
    assert m.alpha_ema == pytest.approx(0.5)


def test_empty_metrics_are_zero():
    m = SpecMetrics()
    assert (m.alpha, m.accepted_per_drafted, m.mean_acceptance_length) == (0.0, 0.0, 0.0)
    assert "per pass accepted/drafted: -" in m.log_line()
