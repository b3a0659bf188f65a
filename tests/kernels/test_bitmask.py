"""Applying bitmasks: the layout, widths and indices (on the torch reference and the automatic
choice, numba on CPU), and the dispatcher: backend names, devices, autograd, lazy imports.
The numba and triton backends are held to the reference bit for bit in their own test files."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from constrain import allocate_token_bitmask, apply_token_bitmask_inplace
from constrain.kernels import BACKENDS, resolve_backend, unpack_bitmask


@pytest.fixture(params=["torch", None], ids=["torch", "auto"])
def backend(request):
    """The semantic tests run on the reference and on the automatic choice (numba on CPU)."""
    return request.param


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
def test_apply_masks_exactly_the_disallowed(dtype, backend):
    width = 70
    allowed = [[0, 31, 32, 63, 64], [5]]
    logits = torch.randn(2, width).to(dtype)
    before = logits.clone()
    apply_token_bitmask_inplace(logits, _mask_for(allowed, width), backend=backend)
    for r, ids in enumerate(allowed):
        for t in range(width):
            if t in ids:
                assert logits[r, t] == before[r, t]
            else:
                assert logits[r, t] == float("-inf")


def test_logits_wider_than_the_mask_are_masked(backend):
    logits = torch.zeros(1, 100)
    apply_token_bitmask_inplace(logits, _mask_for([[1, 2]], 40), backend=backend)  # covers 64 columns
    assert torch.isinf(logits[0, 64:]).all()
    assert logits[0, 1] == 0 and logits[0, 2] == 0


def test_indices_follow_both_conventions(backend):
    width = 40
    bm_full = _mask_for([[1], [2], [3]], width)
    logits = torch.zeros(3, width)
    apply_token_bitmask_inplace(logits, bm_full, indices=[2], backend=backend)
    assert (logits[:2] == 0).all() and logits[2, 3] == 0 and torch.isinf(logits[2]).sum() == width - 1
    compact = _mask_for([[7]], width)
    logits = torch.zeros(3, width)
    apply_token_bitmask_inplace(logits, compact, indices=[1], backend=backend)
    assert (logits[0] == 0).all() and (logits[2] == 0).all() and logits[1, 7] == 0
    # As many mask rows as logits rows and as indices: XGrammar's convention (row i by mask row i).
    logits = torch.zeros(2, width)
    apply_token_bitmask_inplace(logits, _mask_for([[1], [2]], width), indices=[1, 0], backend=backend)
    assert logits[0, 1] == 0 and logits[1, 2] == 0 and torch.isinf(logits).sum() == 2 * (width - 1)


def test_unpack_matches_numpy_bit_order():
    bm = torch.tensor([[-1, 0, 5, -2147483648]], dtype=torch.int32)
    ours = unpack_bitmask(bm, 128)[0].numpy()
    ref = np.unpackbits(bm.numpy().view(np.uint8), bitorder="little").astype(bool)
    assert np.array_equal(ours, ref)


def test_indices_may_be_a_tensor_or_empty(backend):
    width = 40
    for indices in (torch.tensor([2, 0]), torch.tensor([2, 0], dtype=torch.int32), np.array([2, 0]), (2, 0)):
        logits = torch.zeros(3, width)
        apply_token_bitmask_inplace(logits, _mask_for([[1], [2]], width), indices=indices, backend=backend)
        assert logits[2, 1] == 0 and logits[0, 2] == 0 and (logits[1] == 0).all()
        assert torch.isinf(logits[2]).sum() == torch.isinf(logits[0]).sum() == width - 1
    logits = torch.zeros(3, width)
    apply_token_bitmask_inplace(logits, torch.zeros(0, 2, dtype=torch.int32), indices=[], backend=backend)
    assert (logits == 0).all()


@pytest.mark.parametrize("backend_name", ["torch", "numba"])
def test_bad_inputs(backend_name):
    def apply(logits, mask, indices=None):
        apply_token_bitmask_inplace(logits, mask, indices, backend=backend_name)

    with pytest.raises(TypeError, match="torch tensors"):
        apply(torch.zeros(1, 32).numpy(), torch.zeros(1, 1, dtype=torch.int32))
    with pytest.raises(TypeError, match="int32"):
        apply(torch.zeros(1, 32), torch.zeros(1, 1, dtype=torch.int64))
    with pytest.raises(TypeError, match="floating point"):
        apply(torch.zeros(1, 32, dtype=torch.int32), torch.zeros(1, 1, dtype=torch.int32))
    with pytest.raises(ValueError, match="1-D or 2-D"):
        apply(torch.zeros(1, 1, 32), torch.zeros(1, 1, dtype=torch.int32))
    with pytest.raises(ValueError, match="pass indices"):
        apply(torch.zeros(2, 32), torch.zeros(1, 1, dtype=torch.int32))
    with pytest.raises(IndexError):
        apply(torch.zeros(2, 32), torch.zeros(2, 1, dtype=torch.int32), indices=[5])
    with pytest.raises(IndexError):
        apply(torch.zeros(2, 32), torch.zeros(2, 1, dtype=torch.int32), indices=[-1])
    with pytest.raises(ValueError, match="one per logits row or one per index"):
        apply(torch.zeros(3, 32), torch.zeros(2, 1, dtype=torch.int32), indices=[0])
    with pytest.raises(ValueError, match="flat sequence"):
        apply(torch.zeros(3, 32), torch.zeros(3, 1, dtype=torch.int32), indices=[[0, 1]])


def test_unknown_backend_names_itself_and_the_choices():
    with pytest.raises(ValueError, match=r"'cuda'.*'torch', 'numba', 'triton'"):
        apply_token_bitmask_inplace(torch.zeros(1, 32), torch.zeros(1, 1, dtype=torch.int32), backend="cuda")
    with pytest.raises(ValueError, match=r"'Numba'.*'torch', 'numba', 'triton'"):
        resolve_backend(torch.zeros(1, 32), "Numba")
    assert BACKENDS == ("torch", "numba", "triton")


def test_a_backend_that_cannot_run_on_the_device_is_refused():
    meta = torch.zeros(2, 64, device="meta")
    mask = torch.zeros(2, 2, dtype=torch.int32, device="meta")
    with pytest.raises(ValueError, match=r"'numba'.*meta.*'torch', 'numba', 'triton'"):
        apply_token_bitmask_inplace(meta, mask, backend="numba")
    with pytest.raises(ValueError, match=r"'triton'.*'torch', 'numba', 'triton'"):
        apply_token_bitmask_inplace(meta, mask, backend="triton")
    apply_token_bitmask_inplace(meta, mask)  # automatic: the reference runs on any device


@pytest.mark.skipif(
    __import__("os").environ.get("TRITON_INTERPRET") not in (None, "", "0"), reason="triton interprets on CPU here"
)
def test_triton_refuses_cpu_tensors_outside_its_interpreter():
    with pytest.raises(ValueError, match=r"'triton'.*TRITON_INTERPRET.*'torch', 'numba', 'triton'"):
        apply_token_bitmask_inplace(torch.zeros(1, 32), torch.zeros(1, 1, dtype=torch.int32), backend="triton")


def test_automatic_choice():
    assert resolve_backend(torch.zeros(1, 32)) == "numba"
    assert resolve_backend(torch.zeros(1, 32, dtype=torch.bfloat16)) == "numba"
    assert resolve_backend(torch.zeros(1, 32, device="meta")) == "torch"
    assert resolve_backend(torch.zeros(1, 32, dtype=torch.float8_e4m3fn)) == "torch"  # no kernel for fp8
    assert resolve_backend(torch.zeros(1, 32, requires_grad=True)) == "torch"  # autograd must see it
    with torch.no_grad():
        assert resolve_backend(torch.zeros(1, 32, requires_grad=True)) == "numba"


def test_fast_backends_refuse_logits_autograd_tracks():
    logits = torch.zeros(1, 32, requires_grad=True) * 1.0
    with pytest.raises(ValueError, match="autograd"):
        apply_token_bitmask_inplace(logits, torch.zeros(1, 1, dtype=torch.int32), backend="numba")
    apply_token_bitmask_inplace(logits, _mask_for([[3]], 32))  # automatic: the reference, tracked
    assert logits.grad_fn is not None and torch.isinf(logits).sum() == 31


def test_dtypes_without_a_kernel_are_refused_by_name():
    logits = torch.zeros(1, 40, dtype=torch.float8_e4m3fn)  # the automatic choice: torch (see above)
    with pytest.raises(ValueError, match=r"'numba'.*float8"):
        apply_token_bitmask_inplace(logits, _mask_for([[3]], 40), backend="numba")


def test_backends_load_on_first_use(tmp_path):
    """import constrain.kernels loads neither torch nor numba nor triton; the reference needs torch
    only, and the automatic choice on CPU loads numba but never triton."""
    code = (
        "import sys\n"
        "import constrain.kernels as k\n"
        "loaded = lambda: [m for m in ('torch', 'numba', 'triton') if m in sys.modules]\n"
        "print(loaded())\n"
        "import torch\n"
        "k.apply_token_bitmask_inplace(torch.zeros(1, 32), torch.zeros(1, 1, dtype=torch.int32), backend='torch')\n"
        "print(loaded())\n"
        "k.apply_token_bitmask_inplace(torch.zeros(1, 32), torch.zeros(1, 1, dtype=torch.int32))\n"
        "print(loaded())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["[]", "['torch']", "['torch', 'numba']"], out.stdout
