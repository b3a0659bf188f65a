"""The numba CPU backend equals the torch reference bit for bit.

Bits, not values: logits hold NaN and +-inf, and the comparison is of the integer views, so a
kernel that wrote a different NaN, a -0.0, or a finite "very negative" number would fail.
While numba runs, the reference is made to raise: a silent fallback to it cannot pass for the
kernel. Both the serial and the parallel kernel are checked (SERIAL_WORDS forces the choice).
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from typing import Iterator, Optional, Sequence
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import constrain.kernels.bitmask_numba as nb
import constrain.kernels.bitmask_torch as reference
from constrain.kernels import apply_token_bitmask_inplace

from bitmask_cases import DTYPES, bits, random_logits, random_mask  # (tests/support)


@contextmanager
def reference_forbidden() -> Iterator[None]:
    with mock.patch.object(reference, "apply_rows", side_effect=AssertionError("numba fell back to the reference")):
        yield


@contextmanager
def kernel(parallel: Optional[bool]) -> Iterator[None]:
    """parallel None: numba's own choice; True/False: force the parallel/serial kernel."""
    if parallel is None:
        yield
        return
    with mock.patch.object(nb, "SERIAL_WORDS", -1 if parallel else 1 << 62):
        yield


def check(
    base: torch.Tensor, view, mask: torch.Tensor, indices: Optional[Sequence[int]] = None,
    parallel: Optional[bool] = None, allow_fallback: bool = False,
) -> None:
    """Mask view(copy of base) with numba and with the reference; every bit of base must agree
    (so columns outside the view are checked to be untouched too)."""
    ours, ref = base.clone(), base.clone()
    apply_token_bitmask_inplace(view(ref), mask, indices, backend="torch")
    with kernel(parallel), (nullcontext() if allow_fallback else reference_forbidden()):
        apply_token_bitmask_inplace(view(ours), mask, indices, backend="numba")
    assert torch.equal(bits(ours), bits(ref))


def whole(t: torch.Tensor) -> torch.Tensor:
    return t


WIDTHS = [1, 31, 32, 33, 100, 1000, 4096 * 2 + 33, 128_256 + 7]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_equals_the_reference(dtype, width, parallel):
    gen = torch.Generator().manual_seed(width)
    words = (width + 31) // 32
    logits = random_logits(3, width, dtype, gen)
    mask = random_mask(3, words, gen)
    check(logits, whole, mask, parallel=parallel)
    check(logits[1], whole, mask[1], parallel=parallel)  # 1-D logits and mask
    check(logits, whole, random_mask(3, words, gen).fill_(-1), parallel=parallel)  # nothing masked
    check(logits, whole, torch.zeros(3, words, dtype=torch.int32), parallel=parallel)  # everything masked


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
@pytest.mark.parametrize("width,mask_words", [(100, 1), (100, 0), (5000, 3), (128_256, 4000), (40, 5), (33, 1)])
def test_columns_past_the_mask_are_masked_and_mask_bits_past_the_logits_ignored(dtype, parallel, width, mask_words):
    gen = torch.Generator().manual_seed(width + mask_words)
    logits = random_logits(2, width, dtype, gen)
    check(logits, whole, random_mask(2, mask_words, gen), parallel=parallel)
    check(logits, whole, torch.full((2, mask_words), -1, dtype=torch.int32), parallel=parallel)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_indices_in_both_conventions(dtype, parallel):
    gen = torch.Generator().manual_seed(7)
    width = 5000
    logits = random_logits(6, width, dtype, gen)
    full = random_mask(6, (width + 31) // 32, gen)
    compact = random_mask(3, (width + 31) // 32, gen)
    for indices in ([4, 1, 5], [0], [5, 0, 2], [], [3, 3, 1]):
        check(logits, whole, full, indices, parallel=parallel)  # mask row = logits row (XGrammar's)
    for indices in ([4, 1, 5], [0, 5, 2], torch.tensor([2, 3, 0])):
        check(logits, whole, compact, indices, parallel=parallel)  # mask row k for indices[k]


def test_a_repeated_index_gets_every_mask_that_names_it():
    """Compact indices may name a logits row twice; it then gets both masks, in every backend."""
    gen = torch.Generator().manual_seed(11)
    width = 70_000  # parallel-sized
    logits = random_logits(3, width, torch.float32, gen)
    mask = random_mask(4, (width + 31) // 32, gen)
    ours, expected = logits.clone(), logits.clone()
    apply_token_bitmask_inplace(ours, mask, [1, 2, 1, 1], backend="numba")
    for k, row in enumerate([1, 2, 1, 1]):
        apply_token_bitmask_inplace(expected, mask[k : k + 1], [row], backend="torch")
    assert torch.equal(bits(ours), bits(expected))
    reference = logits.clone()
    apply_token_bitmask_inplace(reference, mask, [1, 2, 1, 1], backend="torch")
    assert torch.equal(bits(reference), bits(expected))


def test_a_repeated_row_never_goes_to_the_parallel_kernel():
    """Parallel tasks on one row would race (each rewrites the columns it keeps), which a test
    of the results catches only by luck; so: repeated rows are detected and run serially."""
    assert not nb._has_duplicates(np.array([0, 1, 5])) and not nb._has_duplicates(np.array([5, 0, 2]))
    assert nb._has_duplicates(np.array([1, 2, 1])) and nb._has_duplicates(np.array([3, 3]))
    logits = torch.zeros(3, 70_000)
    mask = torch.zeros(4, (70_000 + 31) // 32, dtype=torch.int32)
    with mock.patch.object(nb, "_mask_rows_parallel", side_effect=AssertionError("parallel kernel on a repeated row")):
        apply_token_bitmask_inplace(logits, mask, [1, 2, 1, 1], backend="numba")
    assert torch.isinf(logits[1:]).all() and (logits[0] == 0).all()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_rows_with_a_stride(dtype, parallel):
    """A slice of wider logits (rows apart by more than their width), 1-D slices too; the columns
    between the rows must keep their bits."""
    gen = torch.Generator().manual_seed(3)
    width, pad = 4100, 37
    base = random_logits(4, width + pad, dtype, gen)
    mask = random_mask(4, (width + 31) // 32, gen)
    check(base, lambda t: t[:, 5 : 5 + width], mask, parallel=parallel)
    check(base, lambda t: t[1:3, pad:], mask[:2], parallel=parallel)
    check(base, lambda t: t[::2, :width], mask[:2], parallel=parallel)
    check(base, lambda t: t[2, 3 : 3 + width], mask[0], parallel=parallel)
    check(base, lambda t: t[:, 5 : 5 + width], mask[:2], [3, 0], parallel=parallel)


@pytest.mark.filterwarnings("ignore:Use of index_put_ on expanded tensors")
def test_layouts_without_adjacent_columns_go_to_the_reference():
    gen = torch.Generator().manual_seed(5)
    base = random_logits(40, 6, torch.float32, gen)  # transposed: (6, 40) with column stride 6
    mask = random_mask(6, 2, gen)
    check(base, lambda t: t.t(), mask, allow_fallback=True)
    check(base, lambda t: t[:, 1], mask[0], allow_fallback=True)  # 1-D, stride 6
    one_row = random_logits(1, 40, torch.float32, gen)
    check(one_row, lambda t: t.expand(3, 40), mask[:3], allow_fallback=True)  # rows sharing memory


@st.composite
def cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rows = draw(st.integers(1, 5))
    width = draw(st.integers(1, 300))
    words = max(0, (width + 31) // 32 + draw(st.sampled_from([0, 0, -1, 1, -3])))
    layout = draw(st.sampled_from(["contiguous", "slice", "1d"]))
    convention = draw(st.sampled_from(["none", "full", "compact"]))
    seed = draw(st.integers(0, 2**31 - 1))
    gen = torch.Generator().manual_seed(seed)
    if layout == "1d":
        rows, convention = 1, "none"
    pad = draw(st.integers(1, 40)) if layout == "slice" else 0
    base = random_logits(rows, width + pad, dtype, gen)
    indices = None
    if convention == "none":
        mask = random_mask(rows, words, gen)
    else:
        indices = draw(st.lists(st.integers(0, rows - 1), max_size=rows, unique=convention == "compact"))
        mask = random_mask(rows if convention == "full" else len(indices), words, gen)
    if layout == "1d":
        return base, (lambda t: t[0, pad:]), mask[0] if draw(st.booleans()) else mask, indices
    return base, (lambda t: t[:, pad:]), mask, indices


@settings(max_examples=150, deadline=None)
@given(case=cases(), parallel=st.booleans())
def test_random_cases_equal_the_reference(case, parallel):
    base, view, mask, indices = case
    check(base, view, mask, indices, parallel=parallel)
