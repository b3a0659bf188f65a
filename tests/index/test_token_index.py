"""Masks are exact: along random walks, our bitmask equals the independent oracle on every token.

The oracle (tests/conftest.py) parses the regex with interegular and judges each token by
decoding its bytes; it shares no code with constrain's parser, DFA, trie or walk.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from constrain import Compiler, Matcher

from token_choices import text_ids  # tests/support

REGEXES = [
    r"[0-9]{1,6}(\.[0-9]{1,3})?",
    r'[^"\\]{0,30}',
    r'\{"name": "[a-zA-Z ]{1,20}", "age": (0|[1-9][0-9]{0,2})\}',
    r"(true|false|null)",
    r"[一-龥]{1,5}",
    r".{0,40}",
    r"(SELECT|select) \w+ (FROM|from) [a-z_]{1,12};",
    r"(😀|🎉)+ ok",
    r'"([^"\\]|\\["\\nt])*"',
    r"[a-z_][a-zA-Z0-9_ ]*",
    r"(?s).*",
]

# Every real tokenizer gets the regexes that stress tokenization differences; Llama 3 gets all.
CASES = [("llama3", r) for r in REGEXES] + [
    (tok, r)
    for tok in ("qwen2.5", "deepseek-v3", "unigram", "sentencepiece", "tekken", "smollm2")
    for r in (REGEXES[1], REGEXES[2], REGEXES[4], REGEXES[7], REGEXES[8])
]


def _unpack(bitmask: np.ndarray, size: int) -> np.ndarray:
    return np.unpackbits(bitmask.view(np.uint8), bitorder="little")[:size].astype(bool)


@pytest.mark.parametrize("tok,pattern", CASES)
def test_mask_equals_oracle_along_random_walks(tok, pattern, load_vocab, regex_oracle, oracle_mask_fn):
    vocab = load_vocab(tok)
    compiler = Compiler(vocab)
    oracle = regex_oracle(pattern)
    rng = random.Random(f"{tok}:{pattern}")
    words = (vocab.size + 31) // 32
    for walk in range(2):
        matcher = Matcher(compiler.compile_regex(pattern))
        state, pending = oracle.start(), b""
        for step in range(6):
            bitmask = np.zeros(words, dtype=np.int32)
            matcher.fill_next_token_bitmask(bitmask)
            ours = _unpack(bitmask, vocab.size)
            theirs = oracle_mask_fn(oracle, state, pending, vocab)
            diff = np.nonzero(ours != theirs)[0]
            assert diff.size == 0, (
                f"walk {walk} step {step}: {diff.size} tokens differ, e.g. "
                + ", ".join(f"{t}={vocab.token_bytes[t]!r} ours={ours[t]}" for t in diff[:5])
            )
            assert matcher.is_accepting() == (not pending and oracle.accepting(state))
            choices = text_ids(np.nonzero(ours)[0], vocab)
            if not choices.size:
                break
            tid = int(rng.choice(choices))
            assert matcher.accept_token(tid)
            state, pending = oracle.advance(state, pending, vocab.token_bytes[tid])
            assert state is not None
