"""JSON Schema coverage per keyword: JSON-Schema-Test-Suite through constrain, XGrammar and llguidance.

    .venv/bin/python scripts/json_schema_coverage.py [--drafts draft2020-12,draft7] [--no-peers]
        [--out docs/json-schema-coverage.md] [--plots docs/img] [--results FILE] [--from-results FILE]

Writes docs/json-schema-coverage.md: for every keyword file of the suite (tests/<draft>/*.json,
not optional/), how many schemas (test groups) each engine compiles, how many it refuses and
why, and how many test cases it decides correctly (the instance is valid ⇔ the grammar accepts
it). Every engine is driven by benchmarks/jsonschema.py's `run_item` (the JSONSchemaBench
benchmark's per-schema measurement: compact form, schema key order, JSON Schema's own rule for
unlisted properties, instances serialized compactly; compile errors classified there), so the
page and the benchmark count the same way. The suite's own rules are added as the tests apply
them (tests/grammar/schema_harness.py): a schema without "$schema" gets its folder's dialect, the
suite's remotes/ are given to constrain as `resources` (the peers have no such option), and a
compile refused because the schema admits no document (ours: UnsatisfiableSchemaError; a peer's
message saying so) decides every invalid instance of its group correctly.

Our figures are checked against the test results: tests/grammar/json_schema_ratchet.json records
each case's outcome as tests/grammar/test_json_schema_suite.py last saw it, and the page says,
per file, whether our "correct" count equals the ratchet's "ok" count.

Data: ../shared/data/json-schema-test-suite beside the checkout (or $CONSTRAIN_BENCH_DATA); absent,
the script exits with a message. Run it from the checkout with the package installed (it imports
constrain.benchmarks); the full run (both drafts, both peers) takes a few minutes on 2 CPUs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Optional

from json_schema_coverage_page import DRAFTS, refused_as_unsatisfiable, render  # scripts/ is sys.path[0]

REPO = Path(__file__).resolve().parents[1]
RATCHET = REPO / "tests" / "grammar" / "json_schema_ratchet.json"
DIALECTS = {  # the suite's README: implementations expect the version of the folder's name
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
}

# XGrammar's errors start with a log prefix ("[07:10:17] /project/cpp/json_schema_converter.cc:5082: ").
XGRAMMAR_LOG_PREFIX = re.compile(r"^\[[0-9:]+\] \S+:[0-9]+: ")


def data_root() -> Path:
    env = os.environ.get("CONSTRAIN_BENCH_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


# ---------------------------------------------------------------------------------------------
# Results: per (draft/file, engine), counts that survive a JSON round trip
# ---------------------------------------------------------------------------------------------


@dataclass
class Cell:
    """One engine on one keyword file."""

    groups: int = 0
    compiled: int = 0
    tests: int = 0
    correct: int = 0
    invalid_accepted: int = 0  # instances labelled invalid that the grammar accepts
    format_only: int = 0  # of those: invalid only through a format reported as not enforced
    failures: dict[str, int] = field(default_factory=dict)  # why a compile failed -> count


@dataclass
class Results:
    engines: list[str]
    versions: dict[str, str]
    cells: dict[str, dict[str, Cell]]  # "draft/file.json" -> engine -> Cell
    ratchet_ok: dict[str, Optional[int]]  # "draft/file.json" -> ok cases recorded by the tests
    seconds: float
    machine: str
    day: str

    def to_json(self) -> str:
        doc = {**self.__dict__, "cells": {k: {e: c.__dict__ for e, c in v.items()} for k, v in self.cells.items()}}
        return json.dumps(doc, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Results":
        doc = json.loads(text)
        doc["cells"] = {k: {e: Cell(**c) for e, c in v.items()} for k, v in doc["cells"].items()}
        return cls(**doc)


# ---------------------------------------------------------------------------------------------
# Running the suite
# ---------------------------------------------------------------------------------------------


def suite_files(root: Path, drafts: list[str]) -> list[str]:
    out = []
    for draft in drafts:
        folder = root / "json-schema-test-suite" / "tests" / draft
        out += [f"{draft}/{p.name}" for p in sorted(folder.glob("*.json"))]
    return out


def remotes(root: Path) -> dict[str, Any]:
    folder = root / "json-schema-test-suite" / "remotes"
    return {"http://localhost:1234/" + p.relative_to(folder).as_posix(): json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(folder.rglob("*.json"))}


def ratchet_ok(files: list[str]) -> dict[str, Optional[int]]:
    """Per file, the cases the JSON Schema tests last recorded as "ok" (None: not recorded)."""
    if not RATCHET.is_file():
        return {f: None for f in files}
    cases = json.loads(RATCHET.read_text(encoding="utf-8")).get("cases", {})
    out: dict[str, Optional[int]] = {}
    for f in files:
        mine = [v for k, v in cases.items() if k.split("#")[0] == f]
        out[f] = sum(v == "ok" for v in mine) if mine else None
    return out


def run(args: argparse.Namespace) -> Results:
    from constrain.benchmarks import jsonschema as bench
    from constrain.benchmarks.engines import ConstrainEngine, peer_engines, tokenizer_dir
    from constrain.benchmarks.schema_workload import Item

    root = data_root()
    if not (root / "json-schema-test-suite" / "tests").is_dir():
        sys.exit(f"JSON-Schema-Test-Suite not found under {root} (a sibling 'shared/data' of the checkout, "
                 "or set CONSTRAIN_BENCH_DATA)")
    drafts = args.drafts.split(",")
    unknown = sorted(set(drafts) - set(DRAFTS))
    if unknown:
        sys.exit(f"unknown drafts {unknown}: use {', '.join(DRAFTS)}")
    files = suite_files(root, drafts)
    if args.only:
        files = [f for f in files if f.split("/")[1] in args.only.split(",")]
    suite_remotes = remotes(root)

    import torch
    from transformers import PreTrainedTokenizerFast

    class SuiteEngine(ConstrainEngine):
        """constrain with the suite's remote documents, as tests/grammar gives them."""

        def compile_json_schema(self, schema: Any) -> Any:
            return self.compiler.compile_json_schema(schema, resources=suite_remotes)

    tok_dir = tokenizer_dir(args.tokenizer)
    ours = SuiteEngine(tok_dir)
    eos = sorted(ours.vocab.eos_token_ids)
    hf = PreTrainedTokenizerFast(tokenizer_file=str(tok_dir / "tokenizer.json"))
    peers, notes = ([], []) if args.no_peers else peer_engines(hf, ours.vocab.size, eos, os.cpu_count() or 1)
    for n in notes:
        print(f"note: {n}", file=sys.stderr)
    engines = [ours, *(PeerMessages(p, bench._Timeout) for p in peers)]
    buf = torch.zeros((1, (ours.vocab.size + 31) // 32), dtype=torch.int32)
    warm = {"type": "object", "properties": {"a": {"type": "integer"}}}
    for e in engines:  # one-time setup outside the loop (token trie, lazy init)
        e.fill(e.matcher(e.compile_json_schema(warm)), buf)

    cache: dict[str, list[int]] = {}

    def tokenize(text: str) -> list[int]:
        if text not in cache:
            cache[text] = hf.encode(text, add_special_tokens=False)
        return cache[text]

    signal.signal(signal.SIGALRM, bench._alarm)
    cells: dict[str, dict[str, Cell]] = {}
    t0 = time.perf_counter()
    for rel in files:
        draft = rel.split("/")[0]
        groups = json.loads((root / "json-schema-test-suite" / "tests" / rel).read_text(encoding="utf-8"))
        cells[rel] = {}
        for e in engines:
            stat, cell = bench.Stat(), Cell()
            for g_i, group in enumerate(groups):
                schema = group["schema"]
                if isinstance(schema, dict) and "$schema" not in schema:
                    schema = {"$schema": DIALECTS[draft], **schema}
                item = Item(rel, f"{rel}#{g_i}", schema, group["tests"])
                before = Counter(stat.failures)
                bench.run_item(e, item, stat, buf, tokenize, args.timeout)
                if any(refused_as_unsatisfiable(k) for k in stat.failures - before):
                    cell.correct += sum(not t["valid"] for t in group["tests"])  # no document is valid
                cell.tests += len(group["tests"])
            cell.groups, cell.compiled = stat.schemas, stat.compiled
            cell.correct += stat.valid_acc + stat.invalid - stat.invalid_acc
            cell.invalid_accepted, cell.format_only = stat.invalid_acc, stat.format_only
            cell.failures = dict(sorted(stat.failures.items()))
            cells[rel][e.name] = cell
        print(f"{rel}: " + "; ".join(f"{n} {c.compiled}/{c.groups} compiled, {c.correct}/{c.tests} correct"
                                     for n, c in cells[rel].items()), file=sys.stderr, flush=True)
    seconds = time.perf_counter() - t0
    versions = {"constrain": _version("constrain")}
    versions.update({p.name: getattr(p, "version", "?") for p in peers})
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, python {sys.version.split()[0]}"
    return Results([e.name for e in engines], versions, cells, ratchet_ok(files), seconds, machine,
                   date.today().isoformat())


class PeerMessages:
    """A peer engine whose compile errors lose XGrammar's log prefix (time and C++ source line)
    before benchmarks/jsonschema.py shortens them to 70 characters."""

    def __init__(self, engine: Any, timeout: type) -> None:
        self._engine, self._timeout = engine, timeout

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def compile_json_schema(self, schema: Any) -> Any:
        try:
            return self._engine.compile_json_schema(schema)
        except self._timeout:
            raise
        except Exception as e:  # noqa: BLE001 - re-raised with the message alone
            raise RuntimeError(XGRAMMAR_LOG_PREFIX.sub("", str(e)).strip()) from None


def _version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001
        return "?"


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--drafts", default=",".join(DRAFTS), help="comma-separated: draft2020-12,draft7")
    ap.add_argument("--only", default="", help="comma-separated file names (type.json,enum.json)")
    ap.add_argument("--no-peers", action="store_true", help="constrain only")
    ap.add_argument("--tokenizer", default="llama3", help="llama3 | qwen2.5 | deepseek-v3 | a directory")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per compile (default 20)")
    ap.add_argument("--out", default=str(REPO / "docs" / "json-schema-coverage.md"), help="the page to write")
    ap.add_argument("--plots", default=None, metavar="DIR", help="write one SVG bar chart per draft into DIR")
    ap.add_argument("--results", default=None, metavar="FILE", help="also save the raw counts as JSON")
    ap.add_argument("--from-results", default=None, metavar="FILE", help="render a saved run instead of running")
    args = ap.parse_args(argv)

    if args.from_results:
        res = Results.from_json(Path(args.from_results).read_text(encoding="utf-8"))
    else:
        res = run(args)
        if args.results:
            Path(args.results).write_text(res.to_json(), encoding="utf-8")
    page = Path(args.out)
    text = render(res, Path(args.plots) if args.plots else None, page)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text, encoding="utf-8")
    print(f"wrote {page} ({len(res.cells)} keyword files, measured in {res.seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
