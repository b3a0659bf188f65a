"""Mask benchmark: constrain vs XGrammar vs llguidance on regexes over a real vocabulary.

    python benchmarks/masks.py [--tokenizer llama3] [--quick] [--plots DIR]

For each regex every engine gets the same question (the regex, matched as a whole, over the same
vocabulary with the same EOS ids) and the same walk (the tokens of a sample string that fully
matches the regex, tokenized by the real tokenizer). Measured in one process:

  compile   regex text -> compiled grammar -> matcher -> first mask filled.  "cold" is the first
            compile of that regex in the process (engines already set up by a warm-up regex);
            "warm" is the median of repeated compiles with the engine's caches cleared
            (constrain: Compiler.clear_cache(); XGrammar: GrammarCompiler(cache_enabled=False);
            llguidance keeps no grammar cache: every LLMatcher is built from scratch).
            Slow compiles get fewer repetitions (a per-regex time budget).
  first     per-token mask time along the first walk of a freshly compiled grammar (each state
            is visited for the first time: lazy engines build rows/DFA states here); per state
            the median over a few fresh compiles and walks.
  warm      per-token mask time along the same walk repeated (states already visited): p50 and
            p99 over all (step, repetition) samples; "max" is the slowest step's median.

Masks are written into a torch int32 (1, ceil(V/32)) CPU tensor through each engine's public
fill call (constrain Matcher.fill_next_token_bitmask, xgrammar GrammarMatcher.
fill_next_token_bitmask, llguidance.torch.fill_next_token_bitmask). The masks of the first walk
are also compared with ours: "agree" counts the differing (step, token) pairs by explanation
(special/added tokens as text, '.' dialect, forced-text canonical tokenization; "??" would be
unexplained; tests/index/test_peers.py checks the same thing exhaustively).
Garbage collection is off while timing. Ratios are ours/theirs: below 1 means we are faster.
`--plots DIR` also writes the warm and first-visit mask times as SVG figures (CDFs and a
histogram on a log axis, one line per engine; benchmarks/svg_plot.py) for docs/benchmarks.md.

Layout: this file holds the workload, the measurement and the driver; engines.py the engine
adapters and tokenizer setup (shared with other benchmarks), report.py the tables and summary.
Run it as a script (benchmarks/ is then sys.path[0], which is how `import engines` and
`import report` resolve), or installed as `python -m constrain.benchmarks.masks` (`constrain bench
masks`), where they are imported relative to the package.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

if __package__:  # python -m constrain.benchmarks.masks (constrain bench masks)
    from .engines import ConstrainEngine, Engine, XGrammarEngine, peer_engines, tokenizer_dir
    from .report import (
        Targets, print_compile, print_first_visit, print_memory, print_summary, print_warm, print_workload,
    )
    from .svg_plot import latency_cdf, latency_histogram
else:  # python benchmarks/masks.py: benchmarks/ is sys.path[0]
    from engines import ConstrainEngine, Engine, XGrammarEngine, peer_engines, tokenizer_dir
    from report import (
        Targets, print_compile, print_first_visit, print_memory, print_summary, print_warm, print_workload,
    )
    from svg_plot import latency_cdf, latency_histogram

# ---------------------------------------------------------------------------------------------
# Workload
# ---------------------------------------------------------------------------------------------

COUNTRIES = (
    "Afghanistan Albania Algeria Andorra Angola Argentina Armenia Australia Austria Azerbaijan "
    "Bahamas Bahrain Bangladesh Barbados Belarus Belgium Belize Benin Bhutan Bolivia Botswana "
    "Brazil Brunei Bulgaria Burundi Cambodia Cameroon Canada Chad Chile China Colombia Comoros "
    "Croatia Cuba Cyprus Denmark Djibouti Dominica Ecuador Egypt Eritrea Estonia Eswatini "
    "Ethiopia Fiji Finland France Gabon Gambia Georgia Germany Ghana Greece Grenada Guatemala "
    "Guinea Guyana Haiti Honduras Hungary Iceland India Indonesia Iran Iraq Ireland Israel Italy "
    "Jamaica Japan Jordan Kazakhstan Kenya Kiribati Kuwait Kyrgyzstan Laos Latvia Lebanon"
).split()
ALT = "(" + "|".join(COUNTRIES) + ")"
ALT_1K = ALT + "(, " + ALT + ")*"  # about 1.1 KB of regex text

FREE_TEXT = (
    "Structured output means the model can only write text that parses: here a free-text field "
    "with accents (café, naïve), dashes — and symbols like 50% or <tags>, but no quote or backslash."
)
DOT_TEXT = (
    "Any character but a newline may appear here, up to two hundred of them: digits 0123456789, "
    "punctuation !?;:, quotes \"'`, brackets ([{}]), and some non-ASCII text like Grüße or 東京."
)


@dataclass
class Case:
    name: str
    pattern: str
    sample: str
    note: str = ""


CASES: list[Case] = [
    Case("number", r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
         "-123456789012345678901234567890.12345678901234567890123456789e+123456"),
    Case("json_object",
         r'\{"name": "[^"\\]{0,40}", "age": (0|[1-9][0-9]{0,2}), '
         r'"email": "[a-z0-9.]+@[a-z0-9]+\.[a-z]{2,4}", "tags": \[("[a-z]+"(, "[a-z]+"){0,5})?\]\}',
         '{"name": "Ada Lovelace, Countess of Lovelace", "age": 36, '
         '"email": "ada.lovelace@example.org", "tags": ["math", "poetry", "engines"]}'),
    Case("json_string", r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"',
         '"He said \\"hello\\" and left.\\nTab\\there, caf\\u00e9 and café \\\\ done — ok"'),
    Case("free_text", r'[^"\\]*', FREE_TEXT),
    Case("dot_200", r".{0,200}", DOT_TEXT,
         note="XGrammar's '.' also matches newline (Python/Rust/constrain: not); the walk has none"),
    Case("enum", r"(red|green|blue|cyan|magenta|yellow|black|white|orange|purple)", "magenta"),
    Case("email", r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}",
         "john.smith+newsletter@mail.example-company.co.uk"),
    Case("date_time",
         r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z)?",
         "2024-02-29T23:59:07Z"),
    Case("uuid", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
         "123e4567-e89b-12d3-a456-426614174000"),
    Case("alt_1k", ALT_1K,
         "France, Germany, Japan, Brazil, Kenya, Iceland, Canada, Chile, India, Egypt, Fiji, "
         "Latvia, Ghana, Cuba, Italy, Jordan"),
    Case("cjk", "[一-鿿]+", "结构化输出约束解码是一种在生成时保证格式正确的方法"),
]

QUICK_CASES = ("number", "json_object", "free_text", "dot_200", "enum", "alt_1k", "cjk")

TARGETS = Targets(warm_p50_us=5.0, warm_p99_us=50.0, first_visit_ms=2.0, compile_1k_ms=10.0)

# ---------------------------------------------------------------------------------------------
# Measurement
# ---------------------------------------------------------------------------------------------


@dataclass
class Result:
    compile_cold_ms: float = float("nan")
    compile_warm_ms: float = float("nan")
    first_us: list[float] = field(default_factory=list)  # one per walk state
    warm_samples_us: list[float] = field(default_factory=list)  # all (step, rep) samples
    warm_step_median_us: list[float] = field(default_factory=list)
    walk_len: int = 0  # tokens of the walk this engine accepted
    masks: list[np.ndarray] = field(default_factory=list)  # first walk, one row per state
    forced: list[bytes] = field(default_factory=list)  # constrain only: forced bytes per state
    build_ms: float = float("nan")  # constrain only: compile_regex alone (regex -> DFA), median
    numpy_samples_us: list[float] = field(default_factory=list)  # constrain only: NumPy buffer
    stats: dict[str, int] = field(default_factory=dict)
    extra: str = ""
    error: str = ""


def run_case(
    engine: Engine, case: Case, walk: list[int], buf, compile_reps: int, first_walks: int,
    walk_reps: int, budget_s: float,
) -> Result:
    r = Result()
    try:
        ns, g, m = engine.first_mask(case.pattern, buf)
    except Exception as e:  # a peer that rejects the regex: report, keep going
        r.error = f"{type(e).__name__}: {str(e).splitlines()[0][:60] if str(e) else ''}"
        return r
    r.compile_cold_ms = ns / 1e6
    # Slow compiles get fewer repetitions (XGrammar spends seconds on wide counted repeats).
    reps = min(compile_reps, int(budget_s * 1e3 / max(r.compile_cold_ms, 1e-3)))
    times = []
    for _ in range(reps):
        ns, g, m = engine.first_mask(case.pattern, buf)
        times.append(ns / 1e6)
    r.compile_warm_ms = statistics.median(times) if times else float("nan")
    if isinstance(engine, ConstrainEngine):
        build = []
        for _ in range(compile_reps):
            engine.clear()
            t0 = time.perf_counter_ns()
            engine.compile(case.pattern)
            build.append((time.perf_counter_ns() - t0) / 1e6)
        r.build_ms = statistics.median(build)

    # First walk on a fresh grammar: every state is visited for the first time. Repeated with a
    # fresh compile each time (as budget allows); per state the median is reported.
    first_reps = max(1, min(first_walks, int(budget_s * 1e3 / max(r.compile_cold_ms, 1e-3))))
    first: list[list[float]] = []
    for rep in range(first_reps):
        engine.clear()
        g = engine.compile(case.pattern)
        m = engine.matcher(g)
        n_ok = 0
        times = []
        for step in range(len(walk) + 1):
            t0 = time.perf_counter_ns()
            engine.fill(m, buf)
            times.append((time.perf_counter_ns() - t0) / 1e3)
            if rep == 0:
                r.masks.append(np.array(buf[0].numpy(), copy=True))
                if isinstance(engine, ConstrainEngine):
                    r.forced.append(m.forced_bytes())
            if step == len(walk):
                break
            if not engine.accept(m, walk[step]):
                r.error = f"rejected walk token {step} ({walk[step]})"
                break
            n_ok += 1
        first.append(times)
    r.first_us = [statistics.median(x) for x in zip(*first)]
    r.walk_len = n_ok

    # Warm: the same walk again, states already visited.
    per_step: list[list[float]] = [[] for _ in range(n_ok + 1)]
    for _ in range(walk_reps):
        engine.reset(m)
        for step in range(n_ok + 1):
            t0 = time.perf_counter_ns()
            engine.fill(m, buf)
            per_step[step].append((time.perf_counter_ns() - t0) / 1e3)
            if step < n_ok:
                engine.accept(m, walk[step])
    r.warm_samples_us = [x for s in per_step for x in s]
    r.warm_step_median_us = [statistics.median(s) for s in per_step]
    if isinstance(engine, ConstrainEngine):
        r.stats = g.stats()
        # Same walk into a NumPy buffer: separates the torch-tensor path's per-call overhead.
        nbuf = np.zeros(tuple(buf.shape), dtype=np.int32)
        for _ in range(max(1, walk_reps // 4)):
            engine.reset(m)
            for step in range(n_ok + 1):
                t0 = time.perf_counter_ns()
                engine.fill(m, nbuf)
                r.numpy_samples_us.append((time.perf_counter_ns() - t0) / 1e3)
                if step < n_ok:
                    engine.accept(m, walk[step])
    elif isinstance(engine, XGrammarEngine):
        try:
            r.stats = {"memory_size_bytes": int(g.memory_size_bytes)}
        except Exception:
            pass
    return r


def write_plots(cases: list[Case], results: dict[str, dict[str, Result]], names: list[str], folder: str) -> list:
    """--plots: SVG figures of the per-token mask times, one line per engine (docs/benchmarks.md)."""
    warm = {n: [x for c in cases for x in results[c.name][n].warm_samples_us] for n in names}
    first = {n: [x for c in cases for x in results[c.name][n].first_us] for n in names}
    d = Path(folder)
    return [
        latency_cdf(warm, d / "masks-warm-cdf.svg",
                    title=f"Warm mask time per token, {len(cases)} regexes pooled (states visited before)"),
        latency_histogram(warm, d / "masks-warm-hist.svg", title="Warm mask time per token: distribution"),
        latency_cdf(first, d / "masks-first-visit-cdf.svg",
                    title="First-visit mask time per state (fresh grammar, every state new)"),
    ]


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenizer", default="llama3", help="llama3 | qwen2.5 | deepseek-v3 | a directory")
    ap.add_argument("--quick", action="store_true", help="fewer regexes and repetitions (< 30 s)")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--xgrammar-threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--plots", default="", metavar="DIR", help="also write SVG plots of the mask times into DIR")
    args = ap.parse_args(argv)

    compile_reps, first_walks, walk_reps, budget_s = (3, 1, 8, 1.0) if args.quick else (10, 5, 40, 8.0)
    cases = CASES
    if args.only:
        wanted = set(args.only.split(","))
        cases = [c for c in CASES if c.name in wanted]
    elif args.quick:
        cases = [c for c in CASES if c.name in QUICK_CASES]

    import torch
    from transformers import PreTrainedTokenizerFast

    tok_dir = tokenizer_dir(args.tokenizer)
    print(f"constrain mask benchmark: tokenizer {args.tokenizer} ({tok_dir}), "
          f"{os.cpu_count()} CPUs, python {sys.version.split()[0]}, torch {torch.__version__}"
          + (", --quick" if args.quick else ""))

    ours = ConstrainEngine(tok_dir)
    vocab = ours.vocab
    eos = sorted(vocab.eos_token_ids)
    hf = PreTrainedTokenizerFast(tokenizer_file=str(tok_dir / "tokenizer.json"))
    peers, notes = peer_engines(hf, vocab.size, eos, args.xgrammar_threads)
    engines: list[Engine] = [ours, *peers]

    words = (vocab.size + 31) // 32
    buf = torch.zeros((1, words), dtype=torch.int32)

    # One-time setup per engine: vocabulary/tokenizer load, then a first compile that pays for
    # lazy one-time work (constrain: token trie + numba load; peers: their own lazy init).
    setup_line = []
    for e in engines:
        t0 = time.perf_counter()
        _, g, m = e.first_mask("(a|b)[0-9]{1,3}", buf)
        e.setup_s = e.load_s + (time.perf_counter() - t0)
        first = time.perf_counter() - t0
        ver = "" if e is ours else f" {e.version}"
        setup_line.append(f"{e.name}{ver}: load {e.load_s:.2f} s + first compile {first * 1e3:.0f} ms")
    print("setup (once per vocabulary): " + "; ".join(setup_line))
    print(f"vocabulary: {vocab.size} ids, {len(vocab.special_ids)} special/added, eos {eos} "
          f"(given to every engine); xgrammar compiler threads: {args.xgrammar_threads}")

    special = np.zeros(vocab.size, dtype=bool)
    special[list(vocab.special_ids)] = True
    has_newline = np.array([b"\n" in t for t in vocab.token_bytes], dtype=bool)

    results: dict[str, dict[str, Result]] = {}
    walks: dict[str, list[int]] = {}
    t_start = time.perf_counter()
    for case in cases:
        walk = hf.encode(case.sample, add_special_tokens=False)
        walks[case.name] = walk
        results[case.name] = {}
        gc.collect()
        gc.disable()
        try:
            for e in engines:
                results[case.name][e.name] = run_case(
                    e, case, walk, buf, compile_reps, first_walks, walk_reps, budget_s)
        finally:
            gc.enable()
        if case.note:
            notes.append(f"{case.name}: {case.note}")
        for e in engines:
            r = results[case.name][e.name]
            if r.error:
                notes.append(f"{case.name}: {e.name}: {r.error}")
    elapsed = time.perf_counter() - t_start

    names = [e.name for e in engines]  # ours first, then the installed peers
    print_workload(cases, walks, results, names, special, has_newline, vocab.token_bytes)
    print_compile(cases, results, names, compile_reps)
    print_first_visit(cases, results, names, first_walks)
    pooled = print_warm(cases, results, names, walk_reps)
    print_memory(cases, results, ours.name, words)
    print_summary(cases, results, names, pooled, TARGETS)
    for n in notes:
        print(f"note: {n}")
    print(f"(measured in {elapsed:.1f} s)")
    if args.plots:
        for path in write_plots(cases, results, names, args.plots):
            print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
