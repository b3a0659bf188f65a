"""Tables and summary of the mask benchmark (benchmarks/masks.py), printed from its results.

Every table takes `results[case name][engine name]` (masks.Result) and the engine names with
ours first, then the installed peers; a peer that is missing simply has no columns. Ratios are
ours/theirs: below 1 means we are faster. Kept apart from the measuring so that the timing code
reads on its own; imported as `import report` (benchmarks/ is sys.path[0]).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from masks import Case, Result

SHORT = {"xgrammar": "xgr", "llguidance": "llg"}  # column prefixes; ours is "ours"


@dataclass(frozen=True)
class Targets:
    """What the summary checks constrain against (pass/fail lines)."""

    warm_p50_us: float
    warm_p99_us: float
    first_visit_ms: float
    compile_1k_ms: float


# ---------------------------------------------------------------------------------------------
# Numbers and tables
# ---------------------------------------------------------------------------------------------


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    return float(np.percentile(np.asarray(xs), q, method="lower" if q < 50 else "higher"))


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


# ---------------------------------------------------------------------------------------------
# Mask agreement with the peers
# ---------------------------------------------------------------------------------------------


def mask_agreement(ours: Result, theirs: Result, pattern: str, special: np.ndarray,
                   has_newline: np.ndarray, token_bytes) -> str:
    """Compare the first-walk masks, counting differences by explanation (see AGREE_LEGEND)."""
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
# The tables, in the order they are printed
# ---------------------------------------------------------------------------------------------


def print_workload(cases: list[Case], walks: dict[str, list[int]], results: dict[str, dict[str, Result]],
                   engines: list[str], special: np.ndarray, has_newline: np.ndarray, token_bytes) -> None:
    ours, pn = engines[0], engines[1:]
    rows = []
    for c in cases:
        r = results[c.name][ours]
        agree = [mask_agreement(r, results[c.name][p], c.pattern, special, has_newline, token_bytes)
                 for p in pn]
        rows.append([c.name, str(len(c.pattern)), str(len(walks[c.name])), str(r.stats.get("dfa_states", "-"))] + agree)
    print_table("Workload (walk = tokens of a matching sample string; states = our DFA states)",
                ["regex", "bytes", "walk", "states"] + [f"agree {SHORT[p]}" for p in pn],
                rows, [12, 6, 5, 6] + [20] * len(pn))
    if pn:
        print(AGREE_LEGEND)


def print_compile(cases: list[Case], results: dict[str, dict[str, Result]], engines: list[str],
                  compile_reps: int) -> None:
    ours, pn = engines[0], engines[1:]
    rows = []
    for c in cases:
        res = results[c.name]
        row = [c.name, fmt(res[ours].build_ms, 7, 2)]
        for e in engines:
            row += [fmt(res[e].compile_cold_ms, 7, 2), fmt(res[e].compile_warm_ms, 7, 2)]
        for p in pn:
            row.append(ratio(res[ours].compile_warm_ms, res[p].compile_warm_ms))
        rows.append(row)
    hdr = ["regex", "ours DFA"]
    for e in engines:
        hdr += [f"{SHORT.get(e, 'ours')} cold", f"{SHORT.get(e, 'ours')} warm"]
    hdr += [f"/{SHORT[p]}" for p in pn]
    print_table(f"Compile to first mask, ms (cold = first compile of the regex; warm = median of up to "
                f"{compile_reps}, caches cleared; ours DFA = compile_regex alone; ratios = warm)",
                hdr, rows, [12, 9] + [9, 9] * len(engines) + [6] * len(pn))


def print_first_visit(cases: list[Case], results: dict[str, dict[str, Result]], engines: list[str],
                      first_walks: int) -> None:
    ours, pn = engines[0], engines[1:]
    rows = []
    for c in cases:
        res = results[c.name]
        row = [c.name]
        for e in engines:
            row += [fmt(pct(res[e].first_us, 50), 7), fmt(max(res[e].first_us, default=float("nan")), 7)]
        for p in pn:
            row.append(ratio(max(res[ours].first_us), max(res[p].first_us, default=float("nan"))))
        rows.append(row)
    hdr = ["regex"]
    for e in engines:
        hdr += [f"{SHORT.get(e, 'ours')} p50", f"{SHORT.get(e, 'ours')} max"]
    hdr += [f"max/{SHORT[p]}" for p in pn]
    print_table(f"First-visit mask time along the first walk, µs (fresh grammar, every state new; "
                f"per state the median of up to {first_walks} fresh walks; p50/max over states)",
                hdr, rows, [12] + [8, 8] * len(engines) + [7] * len(pn))


def print_warm(cases: list[Case], results: dict[str, dict[str, Result]], engines: list[str],
               walk_reps: int) -> dict[str, list[float]]:
    """The warm table and the NumPy-buffer line; returns every engine's pooled warm samples."""
    ours, pn = engines[0], engines[1:]
    rows = []
    pooled: dict[str, list[float]] = {e: [] for e in engines}
    for c in cases:
        res = results[c.name]
        row = [c.name]
        for e in engines:
            r = res[e]
            pooled[e] += r.warm_samples_us
            row += [fmt(pct(r.warm_samples_us, 50), 6), fmt(pct(r.warm_samples_us, 99), 6),
                    fmt(max(r.warm_step_median_us, default=float("nan")), 6)]
        for p in pn:
            row += [ratio(pct(res[ours].warm_samples_us, 50), pct(res[p].warm_samples_us, 50)),
                    ratio(pct(res[ours].warm_samples_us, 99), pct(res[p].warm_samples_us, 99))]
        rows.append(row)
    row = ["ALL"]
    for e in engines:
        row += [fmt(pct(pooled[e], 50), 6), fmt(pct(pooled[e], 99), 6), "".rjust(6)]
    for p in pn:
        row += [ratio(pct(pooled[ours], 50), pct(pooled[p], 50)),
                ratio(pct(pooled[ours], 99), pct(pooled[p], 99))]
    rows.append(row)
    hdr = ["regex"]
    for e in engines:
        s = SHORT.get(e, "ours")
        hdr += [f"{s} p50", f"{s} p99", f"{s} max"]
    for p in pn:
        hdr += [f"p50/{SHORT[p]}", f"p99/{SHORT[p]}"]
    print_table(f"Warm mask time, µs (walk repeated {walk_reps}x; p50/p99 over all samples, "
                f"max = slowest step's median)", hdr, rows, [12] + [8, 8, 8] * len(engines) + [7, 7] * len(pn))

    npool = [x for c in cases for x in results[c.name][ours].numpy_samples_us]
    print(f"constrain into a NumPy int32 buffer instead of a torch tensor (same walks): "
          f"p50 {pct(npool, 50):.2f} µs, p99 {pct(npool, 99):.2f} µs "
          f"(the gap to the torch figures is per-call overhead of the tensor path)")
    return pooled


def print_memory(cases: list[Case], results: dict[str, dict[str, Result]], ours: str, words: int) -> None:
    rows = []
    for c in cases:
        st = results[c.name][ours].stats
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


def print_summary(cases: list[Case], results: dict[str, dict[str, Result]], engines: list[str],
                  pooled: dict[str, list[float]], targets: Targets) -> None:
    """Pass/fail against the targets, then the one-line SUMMARY."""
    ours, pn = engines[0], engines[1:]
    names = [c.name for c in cases]
    p50, p99 = pct(pooled[ours], 50), pct(pooled[ours], 99)
    peer_p50 = min((pct(pooled[p], 50) for p in pn), default=float("nan"))
    peer_p99 = min((pct(pooled[p], 99) for p in pn), default=float("nan"))
    first_max = max(max(results[c][ours].first_us) for c in names)
    first_worst = max(names, key=lambda c: max(results[c][ours].first_us))
    ok = lambda b: "PASS" if b else "FAIL"  # noqa: E731
    print("\nTargets (constrain):")
    print(f"  warm p50 {p50:.2f} µs <= {targets.warm_p50_us} µs: {ok(p50 <= targets.warm_p50_us)}; "
          f"p99 {p99:.2f} µs <= {targets.warm_p99_us} µs: {ok(p99 <= targets.warm_p99_us)}")
    if pn:
        print(f"  vs better peer: p50 {p50:.2f} vs {peer_p50:.2f} µs: {ok(p50 <= peer_p50)}; "
              f"p99 {p99:.2f} vs {peer_p99:.2f} µs: {ok(p99 <= peer_p99)}")
        worse = [c for c in names
                 if pct(results[c][ours].warm_samples_us, 50)
                 > min(pct(results[c][p].warm_samples_us, 50) for p in pn)
                 or pct(results[c][ours].warm_samples_us, 99)
                 > min(pct(results[c][p].warm_samples_us, 99) for p in pn)]
        print(f"  per regex, behind the better peer at p50 or p99: {', '.join(worse) if worse else 'none'}")
    print(f"  first visit max {first_max / 1e3:.3f} ms ({first_worst}) <= {targets.first_visit_ms} ms: "
          f"{ok(first_max / 1e3 <= targets.first_visit_ms)}")
    alt_1k = next((c for c in cases if c.name == "alt_1k"), None)
    if alt_1k is not None:
        r = results["alt_1k"][ours]
        print(f"  1 KB regex ({len(alt_1k.pattern)} B) compile to first mask: cold {r.compile_cold_ms:.2f} ms, "
              f"warm {r.compile_warm_ms:.2f} ms <= {targets.compile_1k_ms} ms: "
              f"{ok(max(r.compile_cold_ms, r.compile_warm_ms) <= targets.compile_1k_ms)}")
    summary = (f"SUMMARY warm p50 {p50:.2f} µs, p99 {p99:.2f} µs, first visit max {first_max / 1e3:.3f} ms"
               + (f", 1KB compile {results['alt_1k'][ours].compile_warm_ms:.2f} ms" if alt_1k is not None else "")
               + (f"; better peer p50 {peer_p50:.2f} µs, p99 {peer_p99:.2f} µs" if pn else ""))
    print(summary)
