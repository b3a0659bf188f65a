"""fill_batch_bitmask: rows filled on threads equal rows filled one by one."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from constrain import Compiler, Matcher, allocate_token_bitmask
from constrain.batch_masks import fill_batch_bitmask


def test_threaded_rows_equal_sequential_ones(llama3):
    compiler = Compiler(llama3)
    grammars = [compiler.compile_regex(p) for p in ("[0-9]{1,4}", "(yes|no)", '"[a-z]*"', "[A-Z][a-z]+")]
    matchers = [Matcher(grammars[i % 4]) for i in range(13)]
    for i, m in enumerate(matchers[:6]):
        allowed = m.allowed_token_ids()
        m.accept_token(int(allowed[(7 * i) % len(allowed)]))
    matchers[3] = None  # a row nobody fills keeps what it had
    expected = allocate_token_bitmask(13, llama3.logits_width)
    for i, m in enumerate(matchers):
        if m is not None:
            m.fill_next_token_bitmask(expected, i)
    got = allocate_token_bitmask(13, llama3.logits_width)
    got[3] = 12345
    with ThreadPoolExecutor(3) as pool:
        fill_batch_bitmask(matchers, got, executor=pool, min_rows_per_thread=2)
    assert (got[3] == 12345).all()
    got[3] = expected[3]
    assert np.array_equal(got.numpy(), expected.numpy())
    again = allocate_token_bitmask(13, llama3.logits_width)
    fill_batch_bitmask(matchers, again)
    assert np.array_equal(again.numpy()[[0, 1, 2, 4]], expected.numpy()[[0, 1, 2, 4]])


def test_too_few_rows_is_named(llama3):
    m = Matcher(Compiler(llama3).compile_regex("a"))
    with pytest.raises(ValueError, match="2 rows for 3 matchers"):
        fill_batch_bitmask([m, m, m], allocate_token_bitmask(2, llama3.logits_width))
