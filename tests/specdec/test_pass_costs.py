"""PassCosts: the cost of a target pass per position count, learned online, and the padding it
chooses; GammaController planning with it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.specdec.pass_costs import PassCosts
from constrain.specdec.planning import GammaController

# seconds per pass measured for SmolLM2 on 2 cores (MKL): 3 positions cost more than 4
CPU_LIKE = {1: 0.065, 2: 0.102, 3: 0.124, 4: 0.090, 5: 0.098, 6: 0.125, 7: 0.147, 8: 0.111}


def learned(table: dict[int, float], samples: int = 2) -> PassCosts:
    costs = PassCosts(max_positions=8)
    for n, s in table.items():
        for _ in range(samples):
            costs.observe(n, s)
    return costs


def test_pads_to_the_cheapest_measured_count_within_the_window():
    costs = learned(CPU_LIKE)
    assert costs.padded(1) == 1  # a one-position pass is never padded
    assert costs.padded(2) == 4 and costs.padded(3) == 4 and costs.padded(4) == 4
    assert costs.padded(6) == 8 and costs.padded(8) == 8
    assert costs.relative(3) == pytest.approx(0.090 / 0.065)


def test_unmeasured_counts_are_tried_before_they_are_trusted():
    costs = PassCosts(max_positions=8)
    assert costs.padded(3) == 3 and costs.relative(3) is None
    costs.observe(3, 0.12)
    assert costs.padded(3) == 3  # one sample is not yet a measurement
    costs.observe(3, 0.12)
    assert costs.padded(3) == 4  # 4 is unknown: tried next
    for _ in range(2):
        costs.observe(4, 0.09)
    assert costs.padded(3) == 5
    for n in (5, 6):
        for _ in range(2):
            costs.observe(n, 0.2)
    assert costs.padded(3) == 4


def test_prefill_and_out_of_range_passes_are_ignored():
    costs = PassCosts(max_positions=4)
    costs.observe(50, 1.0)
    costs.observe(2, 0.0)
    assert all(costs.seconds(n) is None for n in range(1, 5))
    with pytest.raises(ValueError, match="max_positions"):
        PassCosts(max_positions=0)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.integers(1, 8), st.floats(0.01, 1.0), min_size=1), st.integers(1, 8))
def test_padding_never_goes_down_or_past_the_window(table, needed):
    costs = learned(table)
    run = costs.padded(needed)
    assert needed <= run <= min(8, needed + costs.pad_window)
    if needed > 1 and all(costs.seconds(m) is not None for m in range(needed, min(8, needed + 3) + 1)):
        assert costs.seconds(run) == min(costs.seconds(m) for m in range(needed, min(8, needed + 3) + 1))


def test_the_controller_plans_with_the_measured_costs():
    """α 0.5 with free drafts: linear verification at 0.55 per position says don't speculate;
    the table says 3 drafts (4 positions) cost 1.38 passes and pay."""
    linear = GammaController(alpha0=0.5, c0=0.0, verify_cost0=0.55, warmup=0, max_gamma=7)
    assert linear.best() == 0
    tabled = GammaController(alpha0=0.5, c0=0.0, verify_cost0=0.55, warmup=0, max_gamma=7, costs=learned(CPU_LIKE))
    assert tabled.best() == 3


def test_a_controller_takes_the_one_position_time_from_the_table():
    """A later request's controller has the model's one-position time from the start: it needs
    no draft-free pass of its own to time one, and its cost ratios are relative to it."""
    assert not GammaController().has_pass_time
    assert not GammaController(costs=PassCosts()).has_pass_time
    costs = learned(CPU_LIKE)
    ctl = GammaController(costs=costs)
    assert ctl.has_pass_time
    ctl.observe_costs(draft_seconds_per_token=0.1 * costs.seconds(1))
    assert ctl.c == pytest.approx(0.1)
    ctl.observe_costs(verify_seconds=costs.seconds(1) * 1.5, positions=3)
    assert ctl.verify_cost == pytest.approx(0.25)
    ctl.observe_costs(target_seconds_1=2 * costs.seconds(1))  # its own measurement wins from then on
    assert ctl.c == pytest.approx(0.05)
