"""Demo: constrained generation with the embedded default model (SmolLM2-135M-Instruct, GGUF).

Each task pairs a chat prompt with a grammar (a regex, a JSON Schema, a shipped Lark grammar);
`constrain.generate` decodes under it (mask → penalties → temperature → top-k/top-p → draw), so
every output parses. Prints each output as it streams, then its figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

DEFAULT_TASKS = [
    ("Give today's date in ISO format.", r"20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"),
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
LARK_TASK = ("Write an SQL query that lists the names of users older than 30.", "sql")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    parser.add_argument("--top-p", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args(argv)

    from constrain import SamplingParams, generate, grammars
    from constrain.models import DEFAULT_GGUF, load_model

    t0 = time.perf_counter()
    loaded = load_model()  # the embedded default, converted from its GGUF once and cached
    model, tokenizer, compiler, vocab = loaded.model, loaded.tokenizer, loaded.compiler, loaded.vocab
    sampling = SamplingParams(temperature=args.temperature, top_p=args.top_p, seed=args.seed)
    print(f"model {DEFAULT_GGUF}: loaded in {time.perf_counter() - t0:.1f} s; vocabulary {vocab.size} tokens")
    for prompt, source in DEFAULT_TASKS + [SCHEMA_TASK, LARK_TASK]:
        t1 = time.perf_counter()
        if isinstance(source, dict):
            grammar = compiler.compile_json_schema(source)
            shown = "JSON Schema " + json.dumps(source)[:70] + "..."
        elif (prompt, source) == LARK_TASK:
            grammar = compiler.compile_lark(grammars.load(source))
            shown = f"Lark grammar {source!r} (shipped)"
        else:
            grammar = compiler.compile_regex(source)
            shown = source
        compile_ms = (time.perf_counter() - t1) * 1e3
        print(f"\nprompt : {prompt}\ngrammar: {shown}\noutput : ", end="", flush=True)
        result = generate(
            model, tokenizer, [{"role": "user", "content": prompt}], grammar,
            sampling=sampling, max_new_tokens=args.max_new_tokens,
            stream=lambda piece: (sys.stdout.write(piece), sys.stdout.flush()),
        )
        stats = result.stats
        status = "cut at max tokens" if stats.stop_reason == "length" else "complete"
        print(f"   [{status}]")
        print(
            f"         {stats.new_tokens} tokens, {stats.tokens_per_second:.1f} tokens/s; compile "
            f"{compile_ms:.1f} ms; masks {stats.mask_seconds * 1e3:.2f} ms in all "
            f"({stats.greedy_shortcuts} steps took the legal argmax without one)"
        )


if __name__ == "__main__":
    main()
