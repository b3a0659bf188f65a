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


def test_pushdown_masks_computed_concurrently_equal_sequential_ones(llama3):
    """Twelve rows of one Lark grammar whose masks are not cached yet, filled on 4 threads at
    once (the numba walks release the GIL and share the grammar's tables), against another
    compile's masks filled one by one."""
    import random

    from constrain import grammars

    source = grammars.load("sql")
    walked = Compiler(llama3).compile_lark(source)
    rng = random.Random(4)
    paths = []
    for _ in range(12):
        m, path = Matcher(walked), []
        for _ in range(rng.randrange(0, 6)):
            allowed = [t for t in m.allowed_token_ids().tolist() if t not in llama3.eos_token_ids]
            path.append(rng.choice(allowed))
            m.accept_token(path[-1])
        paths.append(path)
    expected = allocate_token_bitmask(12, llama3.logits_width)
    for i, path in enumerate(paths):
        m = Matcher(walked)
        assert m.accept_tokens(path) == len(path)
        m.fill_next_token_bitmask(expected, i)
    fresh = Compiler(llama3).compile_lark(source)  # replayed by ids: no mask computed yet
    rows = []
    for path in paths:
        m = Matcher(fresh)
        assert m.accept_tokens(path) == len(path)
        rows.append(m)
    got = allocate_token_bitmask(12, llama3.logits_width)
    with ThreadPoolExecutor(4) as pool:
        fill_batch_bitmask(rows, got, executor=pool, min_rows_per_thread=1)
    assert np.array_equal(got.numpy(), expected.numpy())
