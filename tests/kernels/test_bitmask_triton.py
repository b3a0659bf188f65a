"""The Triton backend equals the torch reference bit for bit, run by triton's CPU interpreter.

TRITON_INTERPRET=1 only takes effect if it is set before triton is first imported, so the kernel
runs in a child process: this file builds the cases (small: the interpreter runs every program in
Python), the child masks them with backend="triton" and saves the results, and the reference
masks copies here. The child first runs a trivial kernel of its own: if triton does not import,
or its interpreter does not work on this machine, the test is skipped with the child's reason; a
failure of our kernel after that fails the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from constrain.kernels import apply_token_bitmask_inplace

from bitmask_cases import DTYPES, bits, random_logits, random_mask  # (tests/support)

SKIP = 77

CHILD = r'''
import os, sys
os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported
import torch
try:
    import triton
    import triton.language as tl
except Exception as exc:
    print(f"triton does not import: {exc!r}")
    sys.exit(77)

@triton.jit
def _probe(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

try:
    x = torch.zeros(3)
    _probe[(1,)](x, 3, BLOCK=4)
    assert x.tolist() == [1.0, 1.0, 1.0], x
except Exception as exc:
    print(f"triton's interpreter does not run here: {exc!r}")
    sys.exit(77)

import constrain.kernels.bitmask_torch as reference
from constrain.kernels import apply_token_bitmask_inplace, resolve_backend

assert resolve_backend(torch.zeros(1, 8)) == "numba", "CPU tensors go to numba even under the interpreter"

def _no_fallback(*args):
    raise AssertionError("triton fell back to the reference")

reference.apply_rows = _no_fallback  # a silent fallback must not pass for the kernel
cases = torch.load(sys.argv[1], weights_only=False)
results = []
for base, spec, mask, indices in cases:
    apply_token_bitmask_inplace(base[spec], mask, indices, backend="triton")
    results.append(base)
torch.save(results, sys.argv[2])
'''


def build_cases() -> list[tuple]:
    """(base logits, index into base giving the logits to mask, mask, indices)."""
    gen = torch.Generator().manual_seed(0)
    every = (slice(None), slice(None))
    cases: list[tuple] = []
    for dtype in DTYPES:
        for width in (1, 31, 33, 100, 1000, 2100):
            words = (width + 31) // 32
            logits = random_logits(3, width, dtype, gen)
            cases.append((logits, every, random_mask(3, words, gen), None))
            cases.append((logits[1:2].clone(), (0, slice(None)), random_mask(1, words, gen)[0], None))  # 1-D
        logits = random_logits(4, 300, dtype, gen)
        cases.append((logits, every, random_mask(4, 2, gen), None))  # wider than the mask
        cases.append((logits, every, random_mask(4, 20, gen), None))  # mask wider than the logits
        cases.append((logits, every, torch.zeros(4, 0, dtype=torch.int32), None))  # an empty mask
        cases.append((logits, every, random_mask(4, 10, gen), [3, 0, 3]))  # XGrammar's indices
        cases.append((logits, every, random_mask(2, 10, gen), [2, 0]))  # compact indices
        cases.append((logits, every, random_mask(3, 10, gen), [1, 2, 1]))  # a row named twice: both masks
        wide = random_logits(3, 1100 + 13, dtype, gen)
        cases.append((wide, (slice(None), slice(5, 5 + 1100)), random_mask(3, 35, gen), None))  # row stride
        cases.append((wide, (slice(None, None, 2), slice(13, None)), random_mask(2, 35, gen), None))
        cases.append((wide, (2, slice(7, 7 + 1000)), random_mask(1, 32, gen), None))  # 1-D slice
        cases.append((wide, (slice(None), slice(0, 1000)), random_mask(1, 32, gen), [1]))
        cases.append((random_logits(30, 4, dtype, gen), (slice(None), 1), random_mask(1, 1, gen), None))  # stride 4
        cases.append((random_logits(40, 6, dtype, gen).t(), every, random_mask(6, 2, gen), None))  # transposed
        cases.append((random_logits(40, 6, dtype, gen).t(), every, random_mask(2, 2, gen), [5, 0]))
    big = 128_256 + 7
    cases.append((random_logits(1, big, torch.float32, gen), (0, slice(None)), random_mask(1, (big + 31) // 32, gen), None))
    return cases


def expected(base: torch.Tensor, spec, mask: torch.Tensor, indices) -> torch.Tensor:
    """The reference's result; a mask row named twice gets both masks (applied one at a time)."""
    out = base.clone()
    if indices is not None and len(set(indices)) < len(indices) and mask.shape[0] == len(indices):
        for k, row in enumerate(indices):
            apply_token_bitmask_inplace(out[spec], mask[k : k + 1], [row], backend="torch")
    else:
        apply_token_bitmask_inplace(out[spec], mask, indices, backend="torch")
    return out


def test_triton_interpreted_equals_the_reference(tmp_path: Path):
    cases = build_cases()
    torch.save([(b.clone(), s, m, i) for b, s, m, i in cases], tmp_path / "cases.pt")
    (tmp_path / "child.py").write_text(CHILD)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "child.py"), str(tmp_path / "cases.pt"), str(tmp_path / "out.pt")],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )
    if proc.returncode == SKIP:
        pytest.skip(proc.stdout.strip())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = torch.load(tmp_path / "out.pt", weights_only=False)
    assert len(results) == len(cases)
    for n, ((base, spec, mask, indices), got) in enumerate(zip(cases, results)):
        assert got.stride() == base.stride(), f"case {n}: the layout did not survive the trip to the child"
        want = expected(base, spec, mask, indices)
        assert torch.equal(bits(got), bits(want)), f"case {n}: {base.dtype} {tuple(base.shape)} {spec} mask {tuple(mask.shape)} indices {indices}"
