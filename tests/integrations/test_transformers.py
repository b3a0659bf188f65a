"""ConstrainLogitsProcessor: rows followed by their tokens (beam reorders, forks, ended rows),
and model.generate end to end with SmolLM2 (greedy, sampling, beam search, a batch)."""

from __future__ import annotations

import json

import jsonschema
import pytest
import torch

from constrain import Compiler, Matcher
from constrain.integrations.transformers import ConstrainLogitsProcessor

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 20}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def allowed(scores: torch.Tensor) -> set[int]:
    return set(torch.isfinite(scores).nonzero().flatten().tolist())


def test_rows_follow_their_tokens_through_reorders_and_forks(load_vocab):
    vocab = load_vocab("smollm2")
    grammar = Compiler(vocab).compile_regex("(ab|ac|b)c")
    proc = ConstrainLogitsProcessor(grammar)
    tid = vocab.token_id
    a, b, c = tid("a"), tid("b"), tid("c")
    prompt = [[7, 8], [7, 8]]
    width = vocab.logits_width
    out = proc(torch.tensor(prompt), torch.zeros(2, width))
    fresh = set(Matcher(grammar).allowed_token_ids().tolist())
    assert allowed(out[0]) == allowed(out[1]) == fresh
    # step 2: row 0 drew "a", row 1 drew "b"
    out = proc(torch.tensor([[7, 8, a], [7, 8, b]]), torch.zeros(2, width))
    assert c in allowed(out[0]) and b in allowed(out[0]) and allowed(out[1]) == {c}
    # step 3: beam search copied row 0 into both rows, each with another token
    out = proc(torch.tensor([[7, 8, a, b], [7, 8, a, c]]), torch.zeros(2, width))
    assert allowed(out[0]) == {c} and allowed(out[1]) == {c}
    # step 4: both complete; only EOS may follow
    out = proc(torch.tensor([[7, 8, a, b, c], [7, 8, a, c, c]]), torch.zeros(2, width))
    assert allowed(out[0]) == allowed(out[1]) == set(vocab.eos_token_ids)
    eos = min(vocab.eos_token_ids)
    # step 5: row 0 ended (EOS); row 1 ended too and was padded by transformers with a non-EOS id
    out = proc(torch.tensor([[7, 8, a, b, c, eos], [7, 8, a, c, c, eos]]), torch.zeros(2, width))
    assert allowed(out[0]) == set(vocab.eos_token_ids)  # another EOS keeps it ended
    out = proc(torch.tensor([[7, 8, a, b, c, eos, eos], [7, 8, a, c, c, eos, a]]), torch.zeros(2, width))
    assert allowed(out[0]) == set(vocab.eos_token_ids)
    assert allowed(out[1]) == set(range(width)) and proc.rows_unmasked == 1  # padding: unmasked


def test_unseen_prefixes_are_replayed_and_batches_split_by_prompt(load_vocab):
    vocab = load_vocab("smollm2")
    compiler = Compiler(vocab)
    digits, letters = compiler.compile_regex("[0-9]{3}"), compiler.compile_regex("[a-z]{3}")
    proc = ConstrainLogitsProcessor([digits, letters])
    width = vocab.logits_width
    proc(torch.tensor([[1], [1], [1], [1]]), torch.zeros(4, width))  # 2 prompts x 2 beams
    one, x = vocab.token_id("1"), vocab.token_id("x")
    out = proc(torch.tensor([[1, one], [1, one], [1, x], [1, x]]), torch.zeros(4, width))
    assert allowed(out[0]) == allowed(out[1]) and vocab.token_id("5") in allowed(out[0])
    assert vocab.token_id("q") in allowed(out[2]) and vocab.token_id("5") not in allowed(out[2])
    with pytest.raises(ValueError, match="3 rows do not split over 2"):
        proc(torch.tensor([[1, one]] * 3), torch.zeros(3, width))
    with pytest.raises(TypeError, match="CompiledGrammar"):
        ConstrainLogitsProcessor(["[0-9]"])


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
@pytest.mark.parametrize(
    "options",
    [
        dict(do_sample=False),
        dict(do_sample=True, temperature=0.8, top_p=0.9, top_k=30),
        dict(do_sample=False, num_beams=2, num_return_sequences=2),
    ],
    ids=["greedy", "sampling", "beams"],
)
def test_model_generate_outputs_validate(smollm2, options):
    torch.manual_seed(0)
    grammar = Compiler(smollm2.vocab).compile_json_schema(PERSON)
    ids = smollm2.chat_ids("Describe Grace Hopper as JSON with a name and an age.")
    out = smollm2.model.generate(ids, max_new_tokens=50, logits_processor=[ConstrainLogitsProcessor(grammar)], **options)
    assert out.shape[0] == options.get("num_return_sequences", 1)
    for row in out:
        tokens = row[ids.shape[1]:].tolist()
        end = next(i for i, t in enumerate(tokens) if t in smollm2.vocab.eos_token_ids)
        jsonschema.validate(json.loads(smollm2.vocab.decode(tokens[:end]).decode()), PERSON)


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_a_batch_with_a_grammar_per_prompt(smollm2):
    compiler = Compiler(smollm2.vocab)
    grammars = [compiler.compile_regex(r"(yes|no)"), compiler.compile_regex(r"[1-9][0-9]?")]
    tok = smollm2.tokenizer
    tok.padding_side = "left"
    texts = [tok.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True, tokenize=False)
             for q in ("Is water wet? Answer yes or no.", "How many legs does a spider have?")]
    batch = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    out = smollm2.model.generate(**batch, max_new_tokens=6, do_sample=False, logits_processor=[ConstrainLogitsProcessor(grammars)])
    for row, grammar in zip(out, grammars):
        tokens = row[batch["input_ids"].shape[1]:].tolist()
        end = next(i for i, t in enumerate(tokens) if t in smollm2.vocab.eos_token_ids)
        assert grammar.accepts(smollm2.vocab.decode(tokens[:end]))
