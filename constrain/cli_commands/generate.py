"""`constrain generate`: one document from a model under a schema, a Lark grammar or a regex.

The grammar is compiled against the tokenizer's vocabulary before the model is loaded, so bad
input fails in a second, not after the weights are read. Only the document goes to stdout; a
document cut at --max-new-tokens is an error (exit 1), never printed as if it were whole.
"""

from __future__ import annotations

import argparse
from typing import Any

from .output import fail, note, read_text, spinner
from .sources import GrammarSource, grammar_source, regex_source, schema_source
from .vocab_only import tokenizer_compiler

DRAFTS = ("none", "forced", "ngram", "lookup")


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "generate", help="generate one document that matches a schema, grammar or regex",
        description="Generate one document with a language model, constrained to a JSON Schema, a "
        "Lark grammar or a regex; prints only the document on stdout.",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--schema", metavar="FILE", help="a JSON Schema file ('-' reads stdin)")
    source.add_argument("--grammar", metavar="NAME|FILE",
                        help="a shipped grammar (json, arithmetic, csv, sql, python_expr, tool_call) or a .lark file")
    source.add_argument("--regex", metavar="PATTERN", help="a regex the whole output must match")
    prompt = p.add_mutually_exclusive_group(required=True)
    prompt.add_argument("--prompt", help="the prompt (sent as a chat user message to instruct models)")
    prompt.add_argument("--prompt-file", metavar="FILE", help="read the prompt from FILE ('-' reads stdin)")
    p.add_argument("--model", help="smollm2 (the embedded default), a .gguf file, a model folder or a Hugging Face id")
    p.add_argument("--start", metavar="RULE", help="the Lark grammar's start rule (default: start)")
    p.add_argument("--strict", action=argparse.BooleanOptionalAction, default=None,
                   help="schemas: refuse keywords that cannot be enforced exactly (default); "
                   "--no-strict relaxes them")
    p.add_argument("--temperature", type=float, default=0.0, help="0 (default) is greedy")
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--top-k", type=int, default=0, help="0 (default) keeps every token")
    p.add_argument("--seed", type=int, default=None, help="makes sampled output reproducible")
    p.add_argument("--max-new-tokens", type=int, default=256, metavar="N")
    p.add_argument("--draft", choices=DRAFTS, default="forced",
                   help="speculative drafts: forced runs of the grammar (default), plus prompt n-grams (ngram) "
                   "or echoes of the prompt's text (lookup); none turns speculation off")
    p.add_argument("--verbose", "-v", action="store_true", help="stats on stderr")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output while loading the model")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..decode_loop import generate
    from ..kernels.sampling_params import SamplingParams
    from ..matcher import spells_complete_document
    from ..models import load_model

    source = _source(args)
    if args.max_new_tokens < 1:
        fail(f"--max-new-tokens must be at least 1, got {args.max_new_tokens}", 2)
    try:
        sampling = SamplingParams(temperature=args.temperature, top_p=args.top_p, top_k=args.top_k, seed=args.seed)
    except ValueError as exc:
        fail(str(exc).replace("SamplingParams.", "--").replace("_", "-"), 2)
    text = args.prompt if args.prompt is not None else read_text(args.prompt_file, "prompt")
    with spinner(f"compiling {source.label}"):
        grammar = source.compile(tokenizer_compiler(args.model))
    loaded = load_model(args.model, progress=not args.quiet)
    if grammar.vocab.fingerprint != loaded.vocab.fingerprint:  # the tokenizer read another way
        with spinner(f"compiling {source.label}"):
            grammar = source.compile(loaded.compiler)
    prompt: Any = [{"role": "user", "content": text}] if loaded.is_chat else text
    draft = None if args.draft in ("none", "forced") else args.draft
    with loaded.generation_lock:
        result = generate(
            loaded.model, loaded.tokenizer, prompt, grammar, sampling=sampling,
            max_new_tokens=args.max_new_tokens, draft=draft, jump_forward=args.draft != "none",
        )
    if args.verbose:
        _report(loaded, result)
    if not spells_complete_document(grammar, result.token_ids):
        shown = result.text if len(result.text) <= 60 else result.text[:57] + "..."
        fail(f"generation stopped at --max-new-tokens {args.max_new_tokens} before the document was complete "
             f"(it had {shown!r}); raise --max-new-tokens")
    print(result.text, flush=True)
    return 0


def _source(args: argparse.Namespace) -> GrammarSource:
    if args.strict is not None and args.schema is None:
        fail("--strict/--no-strict apply to --schema only", 2)
    if args.start is not None and args.grammar is None:
        fail("--start applies to --grammar only", 2)
    if args.schema == "-" and args.prompt_file == "-":
        fail("--schema and --prompt-file cannot both read stdin", 2)
    if args.schema is not None:
        return schema_source(args.schema, strict=args.strict is not False)
    if args.grammar is not None:
        return grammar_source(args.grammar, args.start)
    return regex_source(args.regex)


def _report(loaded: Any, result: Any) -> None:
    s = result.stats
    note(f"model {loaded.name}: {s.prompt_tokens} prompt tokens, {s.new_tokens} new tokens in {s.seconds:.2f} s "
         f"({s.tokens_per_second:.1f} tokens/s), stop: {s.stop_reason}")
    note(f"{s.target_passes} forward passes ({s.forced_tokens} forced tokens, {s.accepted}/{s.drafted} drafted "
         f"tokens accepted); masks {s.mask_seconds * 1e3:.1f} ms, waited on {s.mask_wait_seconds * 1e3:.1f} ms")
