"""The torch reference for applying bitmasks: layout, widths, indices."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from constrain import allocate_token_bitmask, apply_token_bitmask_inplace
from constrain.kernels import unpack_bitmask


def _mask_for(allowed: list[list[int]], width: int) -> torch.Tensor:
    bm = torch.zeros((len(allowed), (width + 31) // 32), dtype=torch.int32)
    for r, ids in enumerate(allowed):
        for t in ids:
            word = int(bm[r, t // 32]) & 0xFFFFFFFF
            word |= 1 << (t % 32)
            bm[r, t // 32] = word - (1 << 32) if word >= 1 << 31 else word
    return bm


def test_allocate_allows_everything():
    bm = allocate_token_bitmask(2, 100)
    assert bm.shape == (2, 4) and bm.dtype == torch.int32 and (bm == -1).all()
    with pytest.raises(ValueError):
        allocate_token_bitmask(0, 10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_apply_masks_exactly_the_disallowed(dtype):
    width = 70
    allowed = [[0, 31, 32, 63, 64], [5]]
    logits = torch.randn(2, width).to(dtype)
    before = logits.clone()
    apply_token_bitmask_inplace(logits, _mask_for(allowed, width))
    for r, ids in enumerate(allowed):
        for t in range(width):
            if t in ids:
                assert logits[r, t] == before[r, t]
            else:
                assert logits[r, t] == float("-inf")


def test_logits_wider_than_the_mask_are_masked():
    logits = torch.zeros(1, 100)
    apply_token_bitmask_inplace(logits, _mask_for([[1, 2]], 40))  # covers 64 columns
    assert torch.isinf(logits[0, 64:]).all()
    assert logits[0, 1] == 0 and logits[0, 2] == 0


def test_indices_follow_both_conventions():
    width = 40
    bm_full = _mask_for([[1], [2], [3]], width)
    logits = torch.zeros(3, width)
    apply_token_bitmask_inplace(logits, bm_full, indices=[2])
    assert (logits[:2] == 0).all() and logits[2, 3] == 0 and torch.isinf(logits[2]).sum() == width - 1
    compact = _mask_for([[7]], width)
    logits = torch.zeros(3, width)
    apply_token_bitmask_inplace(logits, compact, indices=[1])
    assert (logits[0] == 0).all() and (logits[2] == 0).all() and logits[1, 7] == 0


def test_unpack_matches_numpy_bit_order():
    bm = torch.tensor([[-1, 0, 5, -2147483648]], dtype=torch.int32)
    ours = unpack_bitmask(bm, 128)[0].numpy()
    ref = np.unpackbits(bm.numpy().view(np.uint8), bitorder="little").astype(bool)
    assert np.array_equal(ours, ref)


def test_bad_inputs():
    with pytest.raises(TypeError):
        apply_token_bitmask_inplace(torch.zeros(1, 32), torch.zeros(1, 1, dtype=torch.int64))
    with pytest.raises(ValueError, match="pass indices"):
        apply_token_bitmask_inplace(torch.zeros(2, 32), torch.zeros(1, 1, dtype=torch.int32))
    with pytest.raises(IndexError):
        apply_token_bitmask_inplace(torch.zeros(2, 32), torch.zeros(2, 1, dtype=torch.int32), indices=[5])
