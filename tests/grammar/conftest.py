"""Harness for the JSON Schema front end: test-suite and benchmark data, per-case outcomes, and
the ratchet that keeps them from getting worse.

Test files cannot import each other (importlib mode), so what they share reaches them from here
(the cases, outcomes, ratchet and harness live in schema_harness.py, loaded by path) as fixtures (`shared_data`, `json_compiler`, `schema_harness`) or through
`pytest_generate_tests` (tests that take `suite_file` or `bench_subset` are parametrized with the
files / subsets found under ../shared/data).

Outcome of one instance (a "case"), by rank:
  2  ok                the schema compiled and `accepts` agrees with the instance's label; or
                       the compile raised UnsatisfiableSchemaError (no document is valid: the
                       issue asks for that error) and the instance is labelled invalid
  1  valid_rejected    compiled, but a valid instance is rejected (a narrowing)
  1  key_order         a valid instance rejected only for its key order (property_order="schema",
                       the default; accepted with property_order="any")
  1  unsupported       strict compile raised UnsupportedSchemaError
  1  error:<Class>     compile raised another ConstrainError (SchemaError, LimitExceededError...)
  1  format_not_enforced  compiled, an instance labelled invalid is accepted, but only because
                       of a `format` the compile reports as not enforced (CompiledGrammar.
                       annotations; `format` is an annotation in JSON Schema unless asserted):
                       the `jsonschema` library finds the instance valid once those formats are
                       ignored (and every format it can check otherwise is respected)
  0  invalid_accepted  compiled, and an INVALID instance is accepted: a correctness bug
  0  crash:<Class>     compile or accepts raised something that is not a ConstrainError: a bug

The ratchet (json_schema_ratchet.json beside this file) records each case's category; a case
whose rank drops fails its test. `CONSTRAIN_UPDATE_RATCHET=1` rewrites the file with what the
session ran (other entries are kept). invalid_accepted never passes unless the case is listed in
the file's "known_invalid_accepted" with a reason (written by hand, never by the update).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

import pytest


def _sibling(name: str) -> Any:
    """A helper module of this folder (importlib mode puts no test folder on sys.path)."""
    spec = importlib.util.spec_from_file_location(f"tests_grammar_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


_h = _sibling("schema_harness")
Harness, STATS = _h.Harness, _h.STATS
Ratchet = _sibling("ratchet").Ratchet
SHARED_DATA, RATCHET_PATH, SAMPLE_PATH = _h.SHARED_DATA, _h.RATCHET_PATH, _h.SAMPLE_PATH
bench_subsets, suite_files = _h.bench_subsets, _h.suite_files
SAMPLE_ENV = "CONSTRAIN_BENCH_SAMPLE"


@pytest.fixture(scope="session")
def bench_sample_size() -> int:
    """CONSTRAIN_BENCH_SAMPLE: schemas per bench subset (default 60)."""
    raw = os.environ.get(SAMPLE_ENV, "60")
    try:
        n = int(raw)
    except ValueError:
        raise pytest.UsageError(f"{SAMPLE_ENV} must be an integer, not {raw!r}") from None
    return n


def _missing_param(what: str):
    return pytest.param(None, marks=pytest.mark.skip(reason=f"{what} not found under {SHARED_DATA}"), id="missing")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "suite_file" in metafunc.fixturenames:
        files = suite_files()
        params = files or [_missing_param("json-schema-test-suite/tests/{draft2020-12,draft7}")]
        metafunc.parametrize("suite_file", params, ids=files or None)
    if "bench_subset" in metafunc.fixturenames:
        subsets = bench_subsets()
        params = subsets or [_missing_param("jsonschemabench-tests/ and maskbench/")]
        metafunc.parametrize("bench_subset", params, ids=subsets or None)


# ---------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data beside the repository root (absent in a user's fresh clone: skip)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA} (a sibling 'shared/data' of the repository)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def json_compiler(llama3):
    from constrain import Compiler

    if not hasattr(Compiler, "compile_json_schema"):
        pytest.skip("Compiler.compile_json_schema is not available yet")
    compiler = Compiler(llama3)
    # One-time work (token trie, numba) outside the per-schema compile times.
    compiler.compile_json_schema({"type": "object", "properties": {"a": {"type": "integer"}}})
    compiler.clear_cache()
    return compiler


_RATCHET: Optional[Ratchet] = None


@pytest.fixture(scope="session")
def schema_harness(json_compiler) -> Harness:
    global _RATCHET
    if _RATCHET is None:
        _RATCHET = Ratchet(RATCHET_PATH)
    return Harness(json_compiler, _RATCHET)


@pytest.fixture(scope="session")
def sample_groups() -> list[dict]:
    return json.loads(SAMPLE_PATH.read_text(encoding="utf-8"))["groups"]


# ---------------------------------------------------------------------------------------------
# Session end: summary and ratchet update
# ---------------------------------------------------------------------------------------------

_NOTES: list[str] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _RATCHET is not None and _RATCHET.update and STATS.outcomes:
        _NOTES.extend(_RATCHET.write(STATS))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if not STATS.outcomes:
        return
    tr = terminalreporter
    tr.section("JSON Schema outcomes")
    for area in sorted(STATS.by_area):
        c = STATS.by_area[area]
        total = sum(c.values())
        g = STATS.groups[area]
        rest = ", ".join(f"{k} {v}" for k, v in sorted(c.items()) if k != "ok")
        tr.write_line(
            f"{area:28s} ok {c['ok']:5d}/{total:<5d} ({100 * c['ok'] / max(total, 1):5.1f}%)  "
            f"schemas compiled {g['compiled']}/{g['compiled'] + g['failed']}  [{rest}]"
        )
    for area in sorted(STATS.compile_errors):
        top = STATS.compile_errors[area].most_common(6)
        tr.write_line(f"  {area} compile failures (schemas): " + "; ".join(f"{k} x{v}" for k, v in top))
    times = sorted(STATS.compile_times, reverse=True)
    if times:
        total_s = sum(t for t, _ in times)
        tr.write_line(
            f"compile time: {len(times)} schemas, total {total_s:.1f} s; slowest: "
            + ", ".join(f"{cid.rsplit('/', 1)[0] if not cid.startswith('bench') else cid.split('#')[0]} "
                        f"{t * 1e3:.0f} ms" for t, cid in times[:3])
        )
    for n in _NOTES:
        tr.write_line(n)
