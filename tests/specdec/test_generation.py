"""Speculative generation end to end with SmolLM2-135M-Instruct on CPU: greedy output is token for
token the non-speculative output for JSON Schema, regex and Lark grammars with every drafter;
sampled output stays inside the grammar and reproduces with a seed; a drafter with another
tokenizer is refused."""

from __future__ import annotations

import json
import re

import jsonschema
import lark
import pytest

from constrain import Compiler, grammars
from constrain.decode_loop import generate
from constrain.errors import DrafterMismatchError
from constrain.kernels import SamplingParams

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("smollm2")]

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 30},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "city": {"type": "string", "maxLength": 30},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}
EXTRACT = "Extract the person as JSON: Grace Hopper, 85 years old, lived in New York City."
DATE = r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
GREEDY = SamplingParams(temperature=0)


@pytest.fixture(scope="module")
def compiler(smollm2):
    return Compiler(smollm2.vocab)


@pytest.fixture(scope="module")
def cases(compiler):
    return {
        "json": (EXTRACT, compiler.compile_json_schema(PERSON), 50),
        "regex": ("When did the Apollo 11 mission land on the moon? Answer with a date.", compiler.compile_regex(DATE), 12),
        "lark": ("Write an SQL query selecting the names of users older than 30.", compiler.compile_lark(grammars.load("sql")), 30),
    }


def chat(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


@pytest.mark.parametrize("case", ["json", "regex", "lark"])
def test_greedy_output_is_identical_with_every_drafter(smollm2, cases, case):
    prompt, grammar, n = cases[case]
    run = lambda **kw: generate(smollm2.model, smollm2.tokenizer, chat(prompt), grammar, sampling=GREEDY, max_new_tokens=n, **kw)  # noqa: E731
    plain = run(jump_forward=False)
    assert plain.stats.target_passes >= len(plain.token_ids)
    for kw in ({}, {"draft": "ngram"}, {"draft": "lookup"}, {"draft": "forced", "jump_forward": False}):
        spec = run(**kw)
        assert spec.token_ids == plain.token_ids, (case, kw)
        assert spec.stats.stop_reason == plain.stats.stop_reason
        assert spec.stats.target_passes <= plain.stats.target_passes
    if case == "json":  # forced runs and echoes of the prompt: fewer passes than tokens
        assert run().stats.forced_tokens > 0
        assert run(draft="lookup").stats.mean_acceptance_length > 1.5


def test_a_model_drafter_sharing_the_tokenizer_keeps_greedy_output(smollm2, cases):
    """SmolLM2 drafting for itself: every greedy draft is the target's own argmax, so all are
    accepted, and the output is the plain one."""
    prompt, grammar, _ = cases["json"]
    plain = generate(smollm2.model, smollm2.tokenizer, chat(prompt), grammar, sampling=GREEDY, max_new_tokens=24, jump_forward=False)
    spec = generate(smollm2.model, smollm2.tokenizer, chat(prompt), grammar, sampling=GREEDY, max_new_tokens=24,
                    draft=(smollm2.model, smollm2.tokenizer), jump_forward=False)
    assert spec.token_ids == plain.token_ids
    assert spec.stats.drafted > 0 and spec.stats.alpha > 0.9


@pytest.mark.parametrize("draft", [None, "lookup"])
def test_sampled_output_is_valid_and_reproducible(smollm2, cases, draft):
    params = SamplingParams(temperature=0.8, top_p=0.95, repetition_penalty=1.1, seed=7)
    for case, judge in (
        ("json", lambda text: jsonschema.validate(json.loads(text), PERSON)),
        ("regex", lambda text: re.fullmatch(DATE, text) or pytest.fail(text)),
        ("lark", lambda text: lark.Lark(grammars.load("sql"), parser="earley").parse(text)),
    ):
        prompt, grammar, n = cases[case]
        one = generate(smollm2.model, smollm2.tokenizer, chat(prompt), grammar, sampling=params, max_new_tokens=n, draft=draft)
        two = generate(smollm2.model, smollm2.tokenizer, chat(prompt), grammar, sampling=params, max_new_tokens=n, draft=draft)
        assert one.token_ids == two.token_ids
        if one.stats.stop_reason != "length":
            judge(one.text)


def test_a_drafter_with_another_tokenizer_is_refused(smollm2, cases, tokenizer_files):
    prompt, grammar, _ = cases["regex"]
    with pytest.raises(DrafterMismatchError, match="tokens|token id"):
        generate(smollm2.model, smollm2.tokenizer, chat(prompt), grammar, max_new_tokens=4,
                 draft=(smollm2.model, str(tokenizer_files["llama3"])))
    with pytest.raises(ValueError, match="draft must be"):
        generate(smollm2.model, smollm2.tokenizer, chat(prompt), grammar, max_new_tokens=4, draft="medusa")
