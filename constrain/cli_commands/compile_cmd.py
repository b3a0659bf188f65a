"""`constrain compile`: compile a grammar against a model's vocabulary (tokenizer only, no
weights) with the disk cache on, and say how big it is, how long it took, where it came from,
and what the first mask costs.

Sizes: a regex is one DFA (its states and byte classes); a schema or Lark grammar is a set of
rules, each a DFA with call edges, built near the start rule at compile time and the rest on
first use (rules built / rules, and the DFA states of the built ones)."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from ..errors import DocumentError
from ..matcher import Matcher
from ..models import DEFAULT_MODEL, default_cache_dir
from .output import fail, spinner
from .sources import file_source, grammar_source, regex_source
from .vocab_only import tokenizer_compiler


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "compile", help="compile a schema, grammar or regex; print its size and compile time",
        description="Compile a JSON Schema (.json), a Lark grammar (.lark) or a regex against a model's "
        "vocabulary with the disk cache on; print the automaton's size, the compile time and "
        "whether the result came from the cache.",
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="a .json schema or a .lark grammar ('-' reads a schema from stdin)")
    p.add_argument("--regex", metavar="PATTERN", help="compile this regex instead of a file")
    p.add_argument("--grammar", metavar="NAME", help="compile a shipped grammar (json, sql, ...) instead of a file")
    p.add_argument("--start", metavar="RULE", help="the Lark grammar's start rule (default: start)")
    p.add_argument("--no-strict", dest="strict", action="store_false", help="schemas: relax what cannot be enforced exactly")
    p.add_argument("--model", help="whose vocabulary: smollm2 (default), a .gguf file, a model folder or a Hugging Face id")
    p.add_argument("--warm-up", metavar="DOCS", help="a text file of sample outputs, one per line: compute their "
                   "masks now and store what they teach in the disk cache (later processes start with it)")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    given = [x for x in (args.file, args.regex, args.grammar) if x is not None]
    if len(given) != 1:
        fail("give exactly one of FILE, --regex PATTERN or --grammar NAME", 2)
    if args.regex is not None:
        source = regex_source(args.regex)
    elif args.grammar is not None:
        source = grammar_source(args.grammar, args.start)
    else:
        source = file_source(args.file, args.start, args.strict)
    if args.start is not None and source.kind != "lark":
        fail("--start applies to Lark grammars only", 2)
    if not args.strict and source.kind != "json_schema":
        fail("--no-strict applies to JSON Schemas only", 2)
    t0 = time.perf_counter()
    compiler = tokenizer_compiler(args.model)
    vocab_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    with spinner("indexing the vocabulary"):
        compiler.index  # the token trie, once per process and vocabulary: not the grammar's cost
    index_seconds = time.perf_counter() - t0
    before = compiler.cache_info()
    t1 = time.perf_counter()
    with spinner(f"compiling {source.label}"):
        grammar = source.compile(compiler)
    compile_seconds = time.perf_counter() - t1
    figures = {
        "grammar": source.description,
        "kind": source.kind,
        "model": args.model or DEFAULT_MODEL,
        "vocabulary_tokens": compiler.vocab.size,
        "vocabulary_seconds": round(vocab_seconds, 4),
        "index_seconds": round(index_seconds, 4),
        **_sizes(grammar.stats()),
        "compile_seconds": round(compile_seconds, 4),
        "cache": _cache_status(source.kind, before, compiler.cache_info()),
        "cache_dir": str(default_cache_dir()) if default_cache_dir() is not None else None,
        "warm_entries": grammar.warm.stored if grammar.warm is not None else None,
        **_first_mask(grammar),
        **(_warm_up(grammar, args.warm_up) if args.warm_up else {}),
    }
    print(json.dumps(figures) if args.json else _table(figures))
    return 0


def _warm_up(grammar: Any, path: str) -> dict[str, Any]:
    """Teach the grammar's tables the sample outputs in `path` (one per line, blank lines
    skipped); with the disk cache on, CompiledGrammar.warm_up stores them."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = [(n, line.rstrip("\r\n")) for n, line in enumerate(fh, 1) if line.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"--warm-up: cannot read {path}: {exc}", 1)
    t0 = time.perf_counter()
    try:
        masks = grammar.warm_up([text for _, text in lines])
    except DocumentError as exc:
        fail(f"--warm-up {path}: line {lines[exc.document][0]}: {exc}", 1)
    return {"warm_up_documents": len(lines), "warm_up_masks": masks, "warm_up_seconds": round(time.perf_counter() - t0, 4),
            "warm_stored": grammar.warm.stored if grammar.warm is not None else None}


def _sizes(stats: dict[str, int]) -> dict[str, int]:
    if "rules" in stats:
        return {"rules": stats["rules"], "rules_built": stats["rules_built"], "dfa_states": stats["dfa_states"]}
    return {"dfa_states": stats["dfa_states"], "byte_classes": stats["byte_classes"]}


def _cache_status(kind: str, before: Any, after: Any) -> str:
    if after.hits > before.hits:
        return "memory"  # compiled earlier in this process
    if default_cache_dir() is None:
        return "compiled (disk cache off)"
    if after.disk_hits > before.disk_hits:
        return "disk"
    if kind == "regex" or after.disk_files > before.disk_files:
        return "compiled and stored"
    return "compiled"  # (e.g. a schema with distinct items, a Lark grammar whose imports are left to Lark's loader)


def _first_mask(grammar: Any) -> dict[str, Any]:
    matcher = Matcher(grammar)
    bitmask = np.zeros((grammar.vocab.logits_width + 31) // 32, dtype=np.int32)
    t0 = time.perf_counter()
    matcher.fill_next_token_bitmask(bitmask)
    seconds = time.perf_counter() - t0
    return {"first_mask_seconds": round(seconds, 5), "first_mask_allowed": int(len(matcher.allowed_token_ids()))}


def _table(f: dict[str, Any]) -> str:
    where = {
        "memory": "already compiled in this process",
        "disk": f"loaded from the disk cache ({f['cache_dir']})",
        "compiled and stored": f"compiled now, stored in the disk cache ({f['cache_dir']})",
        "compiled": "compiled now (not kept on disk: docs/engine.md, Caches, says which grammars are not)",
    }.get(f["cache"], f"{f['cache']}")
    if "rules" in f and f["rules_built"] < f["rules"]:
        size = f"{f['rules']} rules ({f['rules_built']} built at compile time, the rest on first use), " \
               f"{f['dfa_states']} DFA states in the built ones"
    elif "rules" in f:
        size = f"{f['rules']} rules, {f['dfa_states']} DFA states"
    else:
        size = f"{f['dfa_states']} DFA states, {f['byte_classes']} byte classes"
    rows = [
        ("grammar", f["grammar"]),
        ("vocabulary", f"{f['model']}: {f['vocabulary_tokens']} tokens (read in {f['vocabulary_seconds']:.2f} s, "
                       f"indexed in {f['index_seconds']:.2f} s)"),
        ("size", size),
        ("compile", f"{f['compile_seconds'] * 1e3:.1f} ms"),
        ("cache", where),
        *([("warm", f"{f['warm_entries']} mask table entries that earlier processes learned, installed "
                    "(docs/lark.md, The disk cache)")] if f.get("warm_entries") else []),
        ("first mask", f"{f['first_mask_seconds'] * 1e3:.2f} ms ({f['first_mask_allowed']} "
                       f"token{'' if f['first_mask_allowed'] == 1 else 's'} allowed)"),
        *([("warm-up", f"{f['warm_up_masks']} masks over {f['warm_up_documents']} documents in "
                       f"{f['warm_up_seconds']:.2f} s; "
                       + (f"{f['warm_stored']} table entries stored" if f["warm_stored"] is not None
                          else "not stored (no disk cache, or a grammar not kept on disk)"))] if "warm_up_masks" in f else []),
    ]
    return "\n".join(f"{name:<11} {value}" for name, value in rows)
