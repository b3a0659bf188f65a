"""The issue's target: on 50 extraction prompts (benchmarks/extraction_prompts.py) a typed function
on SmolLM2 returns a validated object every time. Shape is what the grammar guarantees; how often
the values are right is reported by benchmarks/typed_extraction.py, not asserted here."""

from __future__ import annotations

import pytest

from constrain.benchmarks.extraction_prompts import TASKS
from constrain.benchmarks.typed_extraction import typed_function


def test_fifty_prompts_in_five_record_types():
    assert sum(len(items) for _, _, items in TASKS) == 50
    for record, _, items in TASKS:
        for _, expected in items:
            record.model_validate(expected)  # the expected values are themselves valid records


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_every_extraction_returns_a_validated_object(smollm2):
    for record, instruction, items in TASKS:
        fn = typed_function(record, instruction, max_new_tokens=128)
        values = fn.batch([text for text, _ in items], return_exceptions=True)
        failed = [(text, v) for (text, _), v in zip(items, values) if not isinstance(v, record)]
        assert not failed, failed
