"""JSON Schema benchmark: coverage, correctness and speed of constrain vs XGrammar vs llguidance.

    python benchmarks/jsonschema.py [--quick] [--limit N] [--subsets A,B] [--tokenizer llama3]

Workload: the JSONSchemaBench subsets (../shared/data/jsonschemabench-tests/<subset>, schemas in
jsonschemabench/<subset>) and MaskBench (../shared/data/maskbench/<subset>); per subset at most
--limit schemas (default 100, 0 = all; --quick: 6), chosen with a fixed seed; on 2 CPUs the
default run takes about 10 minutes (mostly XGrammar's eager compiles), --quick about 40 s.
Every engine gets the same question: the schema in compact form (no whitespace, "," and ":"),
JSON Schema's own semantics for unlisted properties, properties in schema order (every engine's
default), over the same vocabulary and EOS ids. Measured per subset and engine, in one process:

  compiled     share of schemas that compile (constrain: strict=True; a keyword it cannot
               enforce exactly is a failure here, not a relaxation).
  valid acc    share of the labelled valid instances the compiled grammar accepts (serialized
               compactly in their own key order, so a valid instance whose keys are not in the
               schema's order is rejected by all three).
  invalid rej  share of the labelled invalid instances rejected; "inv acc" counts the accepted
               ones. For constrain they are split: an instance invalid only through a `format`
               the compile reports as not enforced (CompiledGrammar.annotations; judged by the
               `jsonschema` library) is "format-only"; the rest are bugs (tests/grammar fails on
               them).
  compile      schema dict -> compiled grammar -> matcher -> first mask filled, caches cleared
               (constrain Compiler.clear_cache(); XGrammar cache_enabled=False; llguidance has no
               grammar cache): p50 and p99 over the schemas that compiled.
  mask         time of each fill_next_token_bitmask along the tokens (Llama 3 tokenizer) of the
               first valid instance, on the freshly compiled grammar (each state visited for the
               first time): mean and p99 over all steps of the subset.

Acceptance is judged on bytes for constrain (CompiledGrammar.accepts) and XGrammar
(accept_string), on the instance's tokens for llguidance. Ratios are ours/theirs over the schemas
both compiled: below 1 means we are faster. Garbage collection is off while timing.

The script's name shadows the `jsonschema` library for anything run from benchmarks/ as
sys.path[0]; it takes benchmarks/ off sys.path once it has imported its siblings.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Optional

from constrain.grammar.json_schema.validation import valid_ignoring_unenforced_formats

if __package__:  # python -m constrain.benchmarks.jsonschema (constrain bench jsonschema): nothing to shadow
    from .engines import ConstrainEngine, Engine, peer_engines, tokenizer_dir
    from .report import fmt, pct, print_table, ratio
    from .schema_workload import DATA, SUBSETS, Item, load_subset, serialize  # noqa: F401 (Item: scripts)
else:
    from engines import ConstrainEngine, Engine, peer_engines, tokenizer_dir
    from report import fmt, pct, print_table, ratio
    from schema_workload import DATA, SUBSETS, Item, load_subset, serialize  # noqa: F401 (Item: scripts)

    _HERE = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    sys.modules.pop("jsonschema", None)  # in case anything above resolved it to this file

class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Timeout()


@dataclass
class Stat:
    schemas: int = 0
    compiled: int = 0
    valid: int = 0
    valid_acc: int = 0
    invalid: int = 0
    invalid_acc: int = 0
    compile_ms: dict[str, float] = field(default_factory=dict)  # schema name -> ms
    mask_us: list[float] = field(default_factory=list)
    mask_by_schema: dict[str, list[float]] = field(default_factory=dict)
    walk_rejected: int = 0
    failures: Counter = field(default_factory=Counter)  # why a compile failed
    invalid_cases: list[str] = field(default_factory=list)
    format_only: int = 0  # constrain: invalid_acc explained by an unenforced format


def failure_kind(engine: Engine, e: BaseException) -> str:
    if isinstance(e, _Timeout):
        return "timeout"
    if isinstance(engine, ConstrainEngine):
        from constrain.errors import ConstrainError, UnsupportedSchemaError

        if isinstance(e, UnsupportedSchemaError):
            return f"unsupported {e.keyword}"
        if isinstance(e, ConstrainError):
            return f"error:{type(e).__name__}"
        return f"CRASH:{type(e).__name__}"
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return msg[:70]


class _QuietStderr:
    """Silence fd 2 (XGrammar's C++ warnings such as "allOf ... still ongoing") while compiling."""

    def __enter__(self):
        sys.stderr.flush()
        self.saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)
        return False


def run_item(engine: Engine, item: Item, stat: Stat, buf, tokenize, timeout_s: float) -> None:
    stat.schemas += 1
    engine.clear()
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    t0 = time.perf_counter_ns()
    try:
        with _QuietStderr():
            g = engine.compile_json_schema(item.schema)
            m = engine.matcher(g)
            engine.fill(m, buf)
        dt = time.perf_counter_ns() - t0
    except BaseException as e:  # noqa: BLE001 - a schema an engine cannot take is a data point
        if isinstance(e, KeyboardInterrupt):
            raise
        stat.failures[failure_kind(engine, e)] += 1
        return
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    stat.compiled += 1
    stat.compile_ms[item.name] = dt / 1e6

    texts = [(serialize(t["data"]), bool(t["valid"])) for t in item.tests]
    walk_text = next((t for t, v in texts if v), None)
    if walk_text is not None:  # masks along the first valid instance, states visited first time
        times = []
        for tid in tokenize(walk_text):
            if not engine.accept(m, tid):
                stat.walk_rejected += 1
                break
            t0 = time.perf_counter_ns()
            engine.fill(m, buf)
            times.append((time.perf_counter_ns() - t0) / 1e3)
        stat.mask_us += times
        stat.mask_by_schema[item.name] = times
    for i, (text, valid) in enumerate(texts):
        try:
            ok = engine.accepts_document(g, text, tokenize(text))
        except Exception:  # noqa: BLE001
            ok = False
        if valid:
            stat.valid += 1
            stat.valid_acc += ok
        else:
            stat.invalid += 1
            if ok:
                stat.invalid_acc += 1
                annotations = getattr(g, "annotations", ()) if isinstance(engine, ConstrainEngine) else ()
                if annotations and valid_ignoring_unenforced_formats(item.schema, item.tests[i]["data"], annotations):
                    stat.format_only += 1
                else:
                    stat.invalid_cases.append(f"{item.subset}/{item.name}#{i}")


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenizer", default="llama3", help="llama3 | qwen2.5 | deepseek-v3 | a directory")
    ap.add_argument("--quick", action="store_true", help="6 schemas per subset (< 60 s)")
    ap.add_argument("--limit", type=int, default=None, help="schemas per subset (default 100; 0 = all)")
    ap.add_argument("--subsets", default="", help="comma-separated subset names")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per compile (default 10; quick 3)")
    ap.add_argument("--no-peers", action="store_true", help="constrain only")
    ap.add_argument("--xgrammar-threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    limit = args.limit if args.limit is not None else (6 if args.quick else 100)
    timeout_s = args.timeout if args.timeout is not None else (3.0 if args.quick else 10.0)

    if not DATA.is_dir():
        sys.exit(f"benchmark data not found: {DATA} (a sibling 'shared/data' of the repository)")
    subsets = [s for s in SUBSETS if (DATA / SUBSETS[s] / s).is_dir()]
    if args.subsets:
        wanted = args.subsets.split(",")
        unknown = sorted(set(wanted) - set(SUBSETS))
        if unknown:
            sys.exit(f"unknown subsets {unknown}: use {', '.join(SUBSETS)}")
        subsets = [s for s in subsets if s in wanted]

    import torch
    from transformers import PreTrainedTokenizerFast

    from constrain import Compiler

    if not hasattr(Compiler, "compile_json_schema"):
        sys.exit("this constrain has no Compiler.compile_json_schema yet")

    tok_dir = tokenizer_dir(args.tokenizer)
    print(f"constrain JSON Schema benchmark: tokenizer {args.tokenizer}, {os.cpu_count()} CPUs, "
          f"python {sys.version.split()[0]}, {limit or 'all'} schemas per subset, "
          f"compile timeout {timeout_s:g} s" + (", --quick" if args.quick else ""))
    ours = ConstrainEngine(tok_dir)
    vocab = ours.vocab
    eos = sorted(vocab.eos_token_ids)
    hf = PreTrainedTokenizerFast(tokenizer_file=str(tok_dir / "tokenizer.json"))
    peers, notes = ([], []) if args.no_peers else peer_engines(hf, vocab.size, eos, args.xgrammar_threads)
    engines: list[Engine] = [ours, *peers]
    buf = torch.zeros((1, (vocab.size + 31) // 32), dtype=torch.int32)

    token_cache: dict[str, list[int]] = {}

    def tokenize(text: str) -> list[int]:
        toks = token_cache.get(text)
        if toks is None:
            toks = token_cache[text] = hf.encode(text, add_special_tokens=False)
        return toks

    # One-time setup per engine (token trie, lazy init) on a small schema, outside the timings.
    warm = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    setup = []
    for e in engines:
        t0 = time.perf_counter()
        e.fill(e.matcher(e.compile_json_schema(warm)), buf)
        ver = "" if e is ours else f" {e.version}"
        setup.append(f"{e.name}{ver}: load {e.load_s:.2f} s + first compile {(time.perf_counter() - t0) * 1e3:.0f} ms")
    print("setup: " + "; ".join(setup))

    signal.signal(signal.SIGALRM, _alarm)
    stats: dict[str, dict[str, Stat]] = defaultdict(lambda: {e.name: Stat() for e in engines})
    t_start = time.perf_counter()
    for subset in subsets:
        items = load_subset(subset, limit)
        for item in items:
            gc.collect()
            gc.disable()
            try:
                for e in engines:
                    run_item(e, item, stats[subset][e.name], buf, tokenize, timeout_s)
            finally:
                gc.enable()
    elapsed = time.perf_counter() - t_start

    names = [e.name for e in engines]
    report(subsets, stats, names)
    for n in notes:
        print(f"note: {n}")
    print(f"(measured in {elapsed:.1f} s)")
    return 0


def report(subsets: list[str], stats: dict[str, dict[str, Stat]], names: list[str]) -> None:
    def share(a: int, b: int) -> str:
        return fmt(100 * a / b, 6) if b else "-".rjust(6)

    rows = []
    for subset in subsets + ["ALL"]:
        for name in names:
            if subset == "ALL":
                s = Stat()
                for sub in subsets:
                    t = stats[sub][name]
                    for f in ("schemas", "compiled", "valid", "valid_acc", "invalid", "invalid_acc",
                              "walk_rejected"):
                        setattr(s, f, getattr(s, f) + getattr(t, f))
                    s.compile_ms.update({f"{sub}/{k}": v for k, v in t.compile_ms.items()})
                    s.mask_us += t.mask_us
            else:
                s = stats[subset][name]
            cms = list(s.compile_ms.values())
            rows.append([
                subset if name == names[0] else "", name, str(s.schemas), share(s.compiled, s.schemas),
                share(s.valid_acc, s.valid), share(s.invalid - s.invalid_acc, s.invalid), str(s.invalid_acc),
                fmt(pct(cms, 50), 7, 2), fmt(pct(cms, 99), 7, 1),
                fmt(statistics.fmean(s.mask_us) if s.mask_us else float("nan"), 7),
                fmt(pct(s.mask_us, 99), 7),
            ])
    print_table(
        "Coverage, correctness and speed (compile: schema -> first mask; mask: per token along a valid instance)",
        ["subset", "engine", "n", "compiled%", "valid acc%", "inv rej%", "inv acc",
         "cmp p50 ms", "cmp p99 ms", "mask mean us", "mask p99 us"],
        rows, [16, 10, 4, 9, 10, 8, 7, 10, 10, 12, 11],
    )

    ours = names[0]
    if len(names) > 1:
        rows = []
        for subset in subsets + ["ALL"]:
            row = [subset]
            for peer in names[1:]:
                cmp_pairs, mask_pairs = [], ([], [])
                subs = subsets if subset == "ALL" else [subset]
                for sub in subs:
                    a, b = stats[sub][ours], stats[sub][peer]
                    cmp_pairs += [(a.compile_ms[k], b.compile_ms[k]) for k in a.compile_ms if k in b.compile_ms]
                    for k in a.mask_by_schema:
                        if k in b.mask_by_schema:
                            mask_pairs[0].extend(a.mask_by_schema[k])
                            mask_pairs[1].extend(b.mask_by_schema[k])
                both = len(cmp_pairs)
                row += [
                    str(both),
                    ratio(pct([x for x, _ in cmp_pairs], 50), pct([y for _, y in cmp_pairs], 50)),
                    ratio(pct([x for x, _ in cmp_pairs], 99), pct([y for _, y in cmp_pairs], 99)),
                    ratio(statistics.fmean(mask_pairs[0]) if mask_pairs[0] else float("nan"),
                          statistics.fmean(mask_pairs[1]) if mask_pairs[1] else float("nan")),
                ]
            rows.append(row)
        header, widths = ["subset"], [16]
        for peer in names[1:]:
            short = {"xgrammar": "xgr", "llguidance": "llg"}.get(peer, peer)
            header += [f"{short} both", f"{short} cmp p50", f"{short} cmp p99", f"{short} mask"]
            widths += [9, 11, 11, 9]
        print_table("Ratios ours/theirs over the schemas both compiled (below 1: we are faster)",
                    header, rows, widths)

    print("\nWhy constrain did not compile (per subset, most common first):")
    for subset in subsets:
        f = stats[subset][ours].failures
        if f:
            print(f"  {subset}: " + ", ".join(f"{k} {v}" for k, v in f.most_common(8)))
    for name in names[1:]:
        total: Counter = Counter()
        for subset in subsets:
            total += stats[subset][name].failures
        if total:
            print(f"  ({name}, all subsets: " + "; ".join(f"{k} {v}" for k, v in total.most_common(4)) + ")")
    fmt_only = sum(stats[s][ours].format_only for s in subsets)
    if fmt_only:
        print(f"\nconstrain accepted {fmt_only} instance(s) invalid only through a format it reports as "
              "not enforced (an annotation)")
    bad = [c for subset in subsets for c in stats[subset][ours].invalid_cases]
    if bad:
        print(f"\nconstrain accepted {len(bad)} invalid instance(s) (bugs): " + ", ".join(bad[:20])
              + (" ..." if len(bad) > 20 else ""))
    for name in names:
        rej = sum(stats[s][name].walk_rejected for s in subsets)
        if rej:
            print(f"note: {name} rejected a token of the walked valid instance in {rej} schema(s) "
                  "(key order or a valid-rejected instance; masks timed up to there)")


if __name__ == "__main__":
    raise SystemExit(main())
