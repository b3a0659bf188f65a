"""SamplingParams: checked when made; one per row."""

from __future__ import annotations

import math

import pytest

from constrain.kernels import SamplingParams
from constrain.kernels.sampling_params import params_per_row


def test_defaults_sample_the_plain_distribution():
    p = SamplingParams()
    assert p.temperature == 1.0 and not p.greedy and not p.truncates and not p.has_penalties
    assert SamplingParams(temperature=0).greedy
    assert SamplingParams(top_k=5).truncates and SamplingParams(min_p=0.1).truncates
    assert SamplingParams(frequency_penalty=0.5).has_penalties


@pytest.mark.parametrize(
    "field, value",
    [
        ("temperature", -0.1),
        ("temperature", math.inf),
        ("temperature", math.nan),
        ("top_k", -2),
        ("top_k", 2.5),
        ("top_p", 0.0),
        ("top_p", 1.5),
        ("top_p", math.nan),
        ("min_p", -0.1),
        ("min_p", 1.1),
        ("repetition_penalty", 0.0),
        ("presence_penalty", math.inf),
        ("frequency_penalty", math.nan),
        ("seed", -1),
        ("seed", "7"),
    ],
)
def test_bad_values_name_the_field(field, value):
    with pytest.raises(ValueError, match=f"SamplingParams.{field}"):
        SamplingParams(**{field: value})


def test_params_per_row():
    p = SamplingParams(top_k=3)
    assert params_per_row(p, 3) == [p, p, p]
    q = SamplingParams(temperature=0)
    assert params_per_row([p, q], 2) == [p, q]
    with pytest.raises(ValueError, match="2 SamplingParams for a batch of 3"):
        params_per_row([p, q], 3)
    with pytest.raises(TypeError, match=r"params\[1\]"):
        params_per_row([p, {"temperature": 0}], 2)
