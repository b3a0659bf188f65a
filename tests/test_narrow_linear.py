"""narrow_linear: F.linear over 2..max_rows float32 CPU rows computed as (W @ x.T).T, equal to
F.linear up to float rounding; everything else untouched (bitwise)."""

import pytest
import torch
import torch.nn.functional as F

import constrain.narrow_linear as narrow_module
from constrain.narrow_linear import NARROW_ROWS, narrow_linear


@pytest.fixture
def routed(monkeypatch):
    """How many F.linear calls took the W @ x.T route (results may equal F.linear's bitwise)."""
    count = [0]
    original = narrow_module._narrow

    def counting(*args, **kwargs):
        out = original(*args, **kwargs)
        count[0] += out is not None
        return out

    monkeypatch.setattr(narrow_module, "_narrow", counting)
    return count


@pytest.mark.parametrize("shape", [(2, 64), (1, 3, 64), (2, 4, 64), (1, NARROW_ROWS, 64)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_narrow_rows_match_linear(shape, with_bias, routed):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(*shape, generator=gen)
    w = torch.randn(96, 64, generator=gen)
    b = torch.randn(96, generator=gen) if with_bias else None
    want = F.linear(x, w, b)
    with narrow_linear():
        got = F.linear(x, w, b)
        via_module = torch.nn.Linear(64, 96, bias=with_bias)
        with torch.no_grad():
            via_module.weight.copy_(w)
            if with_bias:
                via_module.bias.copy_(b)
        got_module = via_module(x)
    assert routed[0] == 2  # the functional call and the module's
    assert got.shape == want.shape and got.is_contiguous()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got_module.detach(), want, rtol=1e-5, atol=1e-5)
    # the shape transformers gives the projections next: a view splitting the last dim into heads
    assert got.view(*shape[:-1], 8, 12).shape[-2:] == (8, 12)


@pytest.mark.parametrize("x", [
    torch.randn(1, 64),                        # one row: the gemv path is already the fast one
    torch.randn(1, NARROW_ROWS + 1, 64),       # past the limit: MKL's blocked kernels
    torch.randn(3, 64, dtype=torch.float64),   # not float32
])
def test_other_inputs_pass_through_bitwise(x, routed):
    w = torch.randn(32, 64, dtype=x.dtype)
    want = F.linear(x, w)
    with narrow_linear():
        got = F.linear(x, w)
    assert routed[0] == 0
    assert torch.equal(got, want)


def test_only_while_active():
    stack = torch.overrides._get_current_function_mode_stack
    before = len(stack())
    with narrow_linear():
        assert len(stack()) == before + 1
    assert len(stack()) == before


def test_max_rows_is_configurable(routed):
    x, w = torch.randn(3, 64), torch.randn(32, 64)
    with narrow_linear(max_rows=2):
        got = F.linear(x, w)
    assert routed[0] == 0 and torch.equal(got, F.linear(x, w))
    with narrow_linear(max_rows=3):
        F.linear(x, w)
    assert routed[0] == 1
