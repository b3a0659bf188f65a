"""MaskPrefetcher: the background mask equals the one filled in place; misuse is named."""

from __future__ import annotations

import numpy as np
import pytest
from tokenizers import Tokenizer

from constrain import Compiler, Matcher, allocate_token_bitmask
from constrain.mask_prefetch import MaskPrefetcher


def test_background_masks_equal_direct_ones(llama3, tokenizer_files):
    tok = Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))
    grammar = Compiler(llama3).compile_json_schema({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}})
    matcher = Matcher(grammar)
    prefetch = MaskPrefetcher(llama3.logits_width)
    direct = allocate_token_bitmask(1, llama3.logits_width)
    try:
        for token in [None] + tok.encode('{"a":[12,7]}', add_special_tokens=False).ids:
            if token is not None:
                assert matcher.accept_token(token)
            prefetch.start(matcher)
            got = prefetch.wait().clone()
            matcher.fill_next_token_bitmask(direct, 0)
            assert np.array_equal(got.numpy(), direct.numpy())
        assert prefetch.masks_computed == len(tok.encode('{"a":[12,7]}', add_special_tokens=False).ids) + 1
        assert prefetch.mask_seconds > 0
    finally:
        prefetch.close()


def test_misuse_is_named(llama3):
    matcher = Matcher(Compiler(llama3).compile_regex("[0-9]+"))
    prefetch = MaskPrefetcher(llama3.logits_width)
    with pytest.raises(RuntimeError, match="without start"):
        prefetch.wait()
    prefetch.start(matcher)
    with pytest.raises(RuntimeError, match="already being computed"):
        prefetch.start(matcher)
    prefetch.wait()
    prefetch.close()
