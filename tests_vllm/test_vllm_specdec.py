"""The backend route under vLLM's speculative decoding (n-gram drafts from the prompt; vLLM
refuses custom logits processors there): drafted tokens are validated, the grammar advances over
them to fill one mask per position and rolls back, and the outputs are valid documents."""

from __future__ import annotations

import json

from vllm_workload import PERSON, ROWS, check_output, engine_kwargs, shutdown


def counter(metrics, name: str) -> float:
    return sum(getattr(m, "value", 0) for m in metrics if m.name == name)


def test_speculative_decoding_through_the_backend():
    from vllm import LLM, SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    speculative = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4, "prompt_lookup_min": 2}
    llm = LLM(**engine_kwargs(speculative_config=speculative, structured_outputs_config={"backend": "constrain"},
                              disable_log_stats=False))
    try:
        people = [{"name": "Ada Lovelace", "age": 36}, {"name": "Alan Turing", "age": 41}]
        questions = [f"Copy this JSON exactly: {json.dumps(p, separators=(',', ':'))}" for p in people]
        questions += [ROWS[2].question, ROWS[6].question]
        tokenizer = llm.get_tokenizer()
        prompts = [tokenizer.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True, tokenize=False)
                   for q in questions]
        person = StructuredOutputsParams(json=PERSON)
        params = [SamplingParams(max_tokens=64, temperature=0, structured_outputs=person)] * 2
        params += [SamplingParams(max_tokens=64, temperature=0, structured_outputs=StructuredOutputsParams(regex=ROWS[2].grammar)),
                   SamplingParams(max_tokens=64, temperature=0)]
        outputs = llm.generate(prompts, params, use_tqdm=False)
        metrics = llm.get_metrics()
    finally:
        shutdown(llm)
    for row, out in zip([ROWS[0], ROWS[0], ROWS[2], ROWS[6]], outputs):
        completion = out.outputs[0]
        print(f"specdec {row.name:16} {completion.finish_reason:6} {completion.text!r}")
        assert completion.token_ids
        if row.kind is not None:
            assert completion.finish_reason == "stop"
            assert check_output(row, completion.text) is None, check_output(row, completion.text)
    drafted = counter(metrics, "vllm:spec_decode_num_draft_tokens")
    accepted = counter(metrics, "vllm:spec_decode_num_accepted_tokens")
    print(f"specdec drafted {drafted:.0f} tokens, accepted {accepted:.0f}")
    assert drafted > 0 and accepted > 0
