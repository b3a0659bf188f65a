"""Typed functions on 50 extraction prompts (benchmarks/extraction_prompts.py) with the embedded
SmolLM2-135M-Instruct: how often a validated object comes back (the grammar guarantees the shape:
it must be every time) and how often its values are also right, with and without the schema in
the prompt, one call at a time and batched.

    python benchmarks/typed_extraction.py [--quick] [--model ID] [--modes call,batch]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import constrain

if __package__:  # python -m constrain.benchmarks.typed_extraction (constrain bench typed_extraction)
    from .extraction_prompts import TASKS, field_matches
else:  # python benchmarks/typed_extraction.py: benchmarks/ is sys.path[0]
    from extraction_prompts import TASKS, field_matches


def typed_function(record: type, instruction: str, **options: Any) -> constrain.TypedFunction:
    def extract(text: str) -> Any: ...

    extract.__doc__ = instruction
    extract.__annotations__["return"] = record
    extract.__qualname__ = f"extract_{record.__name__.lower()}"
    return constrain.function(**options)(extract)


def run(mode: str, output_hint: str, model: Any, per_task: int) -> dict[str, float]:
    valid = fields_right = fields_total = records_right = records = 0
    seconds: list[float] = []
    for record, instruction, items in TASKS:
        fn = typed_function(record, instruction, model=model, output_hint=output_hint, max_new_tokens=128)
        items = items[:per_task]
        started = time.perf_counter()
        if mode == "batch":
            values = fn.batch([text for text, _ in items], return_exceptions=True)
            seconds.append((time.perf_counter() - started) / len(items))
        else:
            values = []
            for text, _ in items:
                t0 = time.perf_counter()
                try:
                    values.append(fn(text))
                except constrain.ConstrainError as exc:
                    values.append(exc)
                seconds.append(time.perf_counter() - t0)
        for (text, expected), value in zip(items, values):
            records += 1
            if not isinstance(value, record):
                print(f"  INVALID for {text!r}: {value}", file=sys.stderr)
                continue
            valid += 1
            right = [field_matches(v, getattr(value, k)) for k, v in expected.items()]
            fields_right += sum(right)
            fields_total += len(right)
            records_right += all(right)
    return {
        "records": records, "valid": valid, "field_accuracy": fields_right / max(fields_total, 1),
        "record_accuracy": records_right / max(records, 1), "seconds_per_record": statistics.median(seconds),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 prompts per record type instead of 10")
    parser.add_argument("--model", default=None, help="default: the embedded SmolLM2-135M-Instruct")
    parser.add_argument("--modes", default="call,batch")
    args = parser.parse_args(argv)
    per_task = 2 if args.quick else 10
    loaded = constrain.load_model(args.model)
    print(f"model {loaded.name}; {per_task * len(TASKS)} prompts per run; greedy")
    print(f"{'mode':6} {'output hint':>16} {'valid':>9} {'fields right':>12} {'records right':>13} {'s/record':>9}")
    for mode in args.modes.split(","):
        for hint in ("fields", "none", "schema"):
            r = run(mode, hint, loaded, per_task)
            print(f"{mode:6} {str(hint):>16} {r['valid']:>4}/{r['records']:<4} {r['field_accuracy']:>12.1%} "
                  f"{r['record_accuracy']:>13.1%} {r['seconds_per_record']:>9.3f}", flush=True)


if __name__ == "__main__":
    main()
