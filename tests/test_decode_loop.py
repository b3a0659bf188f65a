"""constrain.generate (the decode loop) end to end with SmolLM2-135M-Instruct on CPU: every output is accepted by
an independent judge of its grammar (jsonschema, Python's re, Lark's Earley parser)."""

from __future__ import annotations

import json
import re

import jsonschema
import lark
import pytest
import torch

from constrain import Compiler, grammars
from constrain.decode_loop import generate
from constrain.model_forward import prompt_ids
from constrain.integrations.transformers import ConstrainLogitsProcessor
from constrain.kernels import SamplingParams

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("smollm2")]

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 24},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "languages": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 3},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
DATE = r"20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
GREEDY = SamplingParams(temperature=0)
SAMPLED = SamplingParams(temperature=0.9, top_p=0.95, seed=3)


@pytest.fixture(scope="module")
def compiler(smollm2):
    return Compiler(smollm2.vocab)


def chat(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


@pytest.mark.parametrize("sampling", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
def test_json_schema_output_validates(smollm2, compiler, sampling):
    pieces: list[str] = []
    result = generate(
        smollm2.model, smollm2.tokenizer, chat("Describe Ada Lovelace as JSON: name, age, languages."),
        compiler.compile_json_schema(PERSON), sampling=sampling, max_new_tokens=80, stream=pieces.append,
    )
    assert result.stats.stop_reason in ("grammar", "eos"), result
    jsonschema.validate(json.loads(result.text), PERSON)
    assert "".join(pieces) == result.text
    assert smollm2.vocab.decode(result.token_ids).decode() == result.text
    assert result.stats.new_tokens == len(result.token_ids) > 0


@pytest.mark.parametrize("sampling", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
def test_regex_output_matches(smollm2, compiler, sampling):
    result = generate(smollm2.model, smollm2.tokenizer, chat("Give today's date in ISO format."),
                      compiler.compile_regex(DATE), sampling=sampling, max_new_tokens=20)
    assert result.stats.stop_reason == "grammar"  # a date admits nothing after it: no EOS step
    assert re.fullmatch(DATE, result.text), result.text


@pytest.mark.parametrize("sampling", [GREEDY, SamplingParams(temperature=0.7, top_k=40, seed=5)], ids=["greedy", "sampled"])
def test_lark_output_parses(smollm2, compiler, sampling):
    result = generate(smollm2.model, smollm2.tokenizer, chat("Write an SQL query: the names of users older than 30."),
                      compiler.compile_lark(grammars.load("sql")), sampling=sampling, max_new_tokens=60)
    assert result.stats.stop_reason in ("grammar", "eos"), result
    lark.Lark(grammars.load("sql"), parser="earley").parse(result.text)


def test_greedy_shortcut_equals_masking_every_step(smollm2, compiler):
    """The plain loop's shortcut (mask only when the argmax is illegal) and the speculative loop
    (jump-forward, the default) against transformers' greedy search with the mask applied at
    every step by our LogitsProcessor: the same tokens."""
    grammar = compiler.compile_json_schema(PERSON)
    messages = chat("Describe Alan Turing as JSON.")
    ours = generate(smollm2.model, smollm2.tokenizer, messages, grammar, sampling=GREEDY, max_new_tokens=60, jump_forward=False)
    assert ours.stats.greedy_shortcuts > 0 and ours.stats.masks_computed > 0
    assert ours.stats.target_passes == len(ours.token_ids) + (ours.stats.stop_reason == "eos")
    ids = prompt_ids(smollm2.tokenizer, messages)
    out = smollm2.model.generate(ids, max_new_tokens=60, do_sample=False, logits_processor=[ConstrainLogitsProcessor(grammar)])
    theirs = out[0, ids.shape[1]:].tolist()
    assert theirs[: len(ours.token_ids)] == ours.token_ids
    assert set(theirs[len(ours.token_ids):]) <= smollm2.vocab.eos_token_ids
    jumped = generate(smollm2.model, smollm2.tokenizer, messages, grammar, sampling=GREEDY, max_new_tokens=60)
    assert jumped.token_ids == ours.token_ids
    assert jumped.stats.forced_tokens > 0 and jumped.stats.target_passes < ours.stats.target_passes


def test_seeded_sampling_reproduces_and_penalties_apply(smollm2, compiler):
    grammar = compiler.compile_regex(r"[a-z]+( [a-z]+){3,8}\.")
    params = SamplingParams(temperature=1.0, seed=11, frequency_penalty=0.5)
    one = generate(smollm2.model, smollm2.tokenizer, chat("Say something about cats."), grammar, sampling=params, max_new_tokens=40)
    two = generate(smollm2.model, smollm2.tokenizer, chat("Say something about cats."), grammar, sampling=params, max_new_tokens=40)
    assert one.token_ids == two.token_ids and re.fullmatch(r"[a-z]+( [a-z]+){3,8}\.", one.text)


def test_stops_at_max_new_tokens_and_checks_its_input(smollm2, compiler):
    grammar = compiler.compile_regex("[a-z ]{20,60}")
    result = generate(smollm2.model, smollm2.tokenizer, "Once upon a time", grammar, max_new_tokens=3)
    assert result.stats.stop_reason == "length" and len(result.token_ids) == 3
    with pytest.raises(TypeError, match="CompiledGrammar"):
        generate(smollm2.model, smollm2.tokenizer, "x", DATE)
    with pytest.raises(TypeError, match="prompt must be"):
        generate(smollm2.model, smollm2.tokenizer, 3.5, grammar)
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate(smollm2.model, smollm2.tokenizer, "x", grammar, max_new_tokens=-1)
    assert torch.equal(prompt_ids(smollm2.tokenizer, [1, 2, 3]), torch.tensor([[1, 2, 3]]))
