"""CachedLM: logits of the last positions of any id sequence, reusing (and cropping) the KV cache
for the prefix shared with the previous call: equal to a full forward pass from scratch."""

from __future__ import annotations

import pytest
import torch

from constrain.model_forward import CachedLM, prompt_ids

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("smollm2")]


def fresh_logits(model, ids: list[int], last: int) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits[0, -last:, :]


def test_logits_equal_a_fresh_pass_across_extensions_and_rollbacks(smollm2):
    lm = CachedLM(smollm2.model)
    base = prompt_ids(smollm2.tokenizer, "The capital of France is").tolist()[0]
    sequences = [
        (base, 1),
        (base + [1000, 2000, 3000], 4),  # extends: only 3 new positions computed
        (base + [1000], 2),  # goes back: the cache is cropped
        (base + [1000, 42, 43], 3),
        (base[:3], 1),  # shorter than anything cached
        (base[:3] + [7, 8, 9], 2),
    ]
    for ids, last in sequences:
        got = lm.logits(ids, last)
        assert got.shape == (last, smollm2.model.config.vocab_size)
        torch.testing.assert_close(got, fresh_logits(smollm2.model, ids, last), atol=2e-4, rtol=1e-4)
    assert lm.passes == len(sequences)
    assert lm.positions < sum(len(ids) for ids, _ in sequences)  # the shared prefixes were reused


def test_bad_arguments_are_named(smollm2):
    lm = CachedLM(smollm2.model)
    with pytest.raises(ValueError, match="last must be in 1..2"):
        lm.logits([1, 2], 3)
