"""Cases, outcomes, the ratchet and the compile-and-judge harness of the JSON Schema tests.

Loaded by conftest.py from this folder (test modules cannot import each other in importlib
mode): conftest holds the data discovery, fixtures and session hooks; see its docstring for the
outcome categories and the ratchet's rules.
"""

from __future__ import annotations

import json
import random
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

import pytest

from constrain.grammar.json_schema.validation import valid_ignoring_unenforced_formats

HERE = Path(__file__).resolve().parent
SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
RATCHET_PATH = HERE / "json_schema_ratchet.json"
SAMPLE_PATH = HERE / "data" / "json_schema_sample.json"

SUITE_DRAFTS = ("draft2020-12", "draft7")
# jsonschemabench-tests/<subset>/ (schema in jsonschemabench/<subset>/) and maskbench/<subset>/.
BENCH_ROOTS = ("jsonschemabench-tests", "maskbench")
BENCH_SEED = 20240601

# Data discovery (plain functions: also used at collection time)


def suite_files() -> list[str]:
    """'draft7/type.json', ... : the keyword files at the top of each draft folder (no optional/)."""
    root = SHARED_DATA / "json-schema-test-suite" / "tests"
    out = []
    for draft in SUITE_DRAFTS:
        folder = root / draft
        if folder.is_dir():
            out += [f"{draft}/{p.name}" for p in sorted(folder.glob("*.json"))]
    return out


_REMOTES: Optional[dict] = None


def suite_remotes() -> dict:
    """The suite's remotes/ documents under the URIs its tests name (http://localhost:1234/...):
    given to the compile as `resources` (the suite's README: implementations serve them there)."""
    global _REMOTES
    if _REMOTES is None:
        root = SHARED_DATA / "json-schema-test-suite" / "remotes"
        _REMOTES = {
            "http://localhost:1234/" + p.relative_to(root).as_posix(): json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(root.rglob("*.json"))
        } if root.is_dir() else {}
    return _REMOTES


def bench_subsets() -> list[str]:
    out = []
    for root in BENCH_ROOTS:
        folder = SHARED_DATA / root
        if folder.is_dir():
            out += sorted(p.name for p in folder.iterdir() if p.is_dir())
    return out


# The suite's folders assume their dialect; our API has no draft argument, so a root schema
# without "$schema" gets the folder's one (the suite's README: "implementations MUST be
# configured to expect the version matching the test directory name").
DIALECTS = {
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
}

# key_order: a valid instance whose keys are not in schema order (the default option), accepted
# with property_order="any".
RANK = {"ok": 2, "valid_rejected": 1, "key_order": 1, "unsupported": 1, "format_not_enforced": 1, "invalid_accepted": 0}


def rank(category: str) -> int:
    if category in RANK:
        return RANK[category]
    if category.startswith("error:"):
        return 1
    return 0  # crash:<Class> and anything unknown


# ---------------------------------------------------------------------------------------------
# Cases and outcomes
# ---------------------------------------------------------------------------------------------


def serialize(data: Any) -> bytes:
    """An instance as the compact grammar writes it. Lone surrogates (which UTF-8 cannot carry)
    fall back to \\u escapes."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def with_dialect(schema: Any, draft: Optional[str]) -> Any:
    if draft and isinstance(schema, dict) and "$schema" not in schema:
        return {"$schema": DIALECTS[draft], **schema}
    return schema


def snippet(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class Outcome:
    case_id: str
    category: str
    valid: bool
    description: str
    schema: Any
    instance: bytes
    detail: str = ""  # compile error / crash traceback


@dataclass
class GroupResult:
    outcomes: list[Outcome]
    compiled: bool
    compile_s: float
    error: str = ""  # category of a failed compile


@dataclass
class Stats:
    """Everything the session ran, for the terminal summary and the ratchet update."""

    outcomes: dict[str, str] = field(default_factory=dict)  # case id -> category
    by_area: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    groups: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    compile_times: list[tuple[float, str]] = field(default_factory=list)
    file_keys: set[str] = field(default_factory=set)  # ids up to '#': fully run this session
    compile_errors: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))


STATS = Stats()


def area_of(case_id: str) -> str:
    """The summary line a case belongs to: the draft, 'sample', or 'bench/<subset>'."""
    parts = case_id.split("/")
    if parts[0] == "bench":
        return "/".join(parts[:2])
    return parts[0]


class Harness:
    """Compile + judge + ratchet, shared by the test files through the `schema_harness` fixture."""

    def __init__(self, compiler: Any, ratchet: Any) -> None:
        from constrain.errors import ConstrainError, UnsatisfiableSchemaError, UnsupportedSchemaError

        self.compiler = compiler
        self._unsatisfiable = UnsatisfiableSchemaError
        self.ratchet = ratchet
        self._constrain_error = ConstrainError
        self._unsupported = UnsupportedSchemaError

    # -- running ---------------------------------------------------------------------------
    def run_group(
        self,
        schema: Any,
        tests: list[dict],
        case_id: Any,
        *,
        draft: Optional[str] = None,
        file_key: Optional[str] = None,
        resources: Optional[dict] = None,
    ) -> GroupResult:
        """Compile `schema` once (strict, default options) and judge every test instance.
        `case_id(i)` names test i. Never raises for the schema's sake: crashes become outcomes."""
        schema = with_dialect(schema, draft)
        pristine = json.dumps(schema, sort_keys=True)
        compiled = None
        error = detail = why = ""
        t0 = time.perf_counter()
        try:
            compiled = self.compiler.compile_json_schema(schema, resources=resources)
        except self._unsupported as e:
            error, detail = "unsupported", f"{e.keyword!r} at {e.pointer}: {e}"
            why = f"unsupported {e.keyword}"
        except self._unsatisfiable as e:
            error, detail, why = "unsatisfiable", str(e), "unsatisfiable"
        except self._constrain_error as e:
            error, detail = f"error:{type(e).__name__}", str(e)
            why = f"{error} {str(e).splitlines()[0][:60]}" if str(e) else error
        except Exception as e:  # noqa: BLE001 - anything else is a translator bug
            error, detail = f"crash:{type(e).__name__}", traceback.format_exc(limit=-6)
        compile_s = time.perf_counter() - t0
        if json.dumps(schema, sort_keys=True) != pristine:
            error, detail = "crash:SchemaMutated", "compile_json_schema modified the schema it was given"
            compiled = None

        outcomes = []
        for i, t in enumerate(tests):
            valid = bool(t["valid"])
            instance = serialize(t["data"])
            cid = case_id(i)
            category, d = error, detail
            if error == "unsatisfiable":
                category = "valid_rejected" if valid else "ok"
            if compiled is not None:
                try:
                    accepted = compiled.accepts(instance)
                except Exception as e:  # noqa: BLE001
                    category, d = f"crash:{type(e).__name__}", traceback.format_exc(limit=-6)
                else:
                    if accepted == valid:
                        category = "ok"
                    elif valid:
                        category = "key_order" if self._accepted_in_any_order(schema, resources, instance) else "valid_rejected"
                    elif valid_ignoring_unenforced_formats(schema, t["data"], getattr(compiled, "annotations", ())):
                        category = "format_not_enforced"
                        d = "; ".join(a for a in compiled.annotations if "format" in a)
                    else:
                        category = "invalid_accepted"
            outcomes.append(Outcome(cid, category, valid, t.get("description", ""), schema, instance, d))
        if file_key is not None:
            STATS.file_keys.add(file_key)
        result = GroupResult(outcomes, compiled is not None, compile_s, error)
        if outcomes:
            STATS.compile_times.append((compile_s, outcomes[0].case_id))
            area = area_of(outcomes[0].case_id)
            STATS.groups[area]["compiled" if compiled is not None else "failed"] += 1
            if error:
                STATS.compile_errors[area][why or error] += 1
        return result

    def _accepted_in_any_order(self, schema: Any, resources: Optional[dict], instance: bytes) -> bool:
        """Does the schema compiled with property_order="any" accept the instance (asked for
        rejected valid instances: was it only the order of the keys)?"""
        try:
            return self.compiler.compile_json_schema(schema, resources=resources, property_order="any").accepts(instance)
        except self._constrain_error:
            return False

    # -- judging ---------------------------------------------------------------------------
    def check(self, label: str, outcomes: Iterable[Outcome]) -> str:
        """Record outcomes; fail on crashes, unexplained invalid_accepted, and ratchet
        regressions. Returns a one-line summary (the test prints it)."""
        outcomes = list(outcomes)
        crashes, invalid, regressions, improved, new = [], [], [], [], 0
        counts: Counter = Counter()
        for o in outcomes:
            STATS.outcomes[o.case_id] = o.category
            STATS.by_area[area_of(o.case_id)][o.category] += 1
            counts[o.category] += 1
            if o.category.startswith("crash:"):
                crashes.append(o)
            elif o.category == "invalid_accepted" and o.case_id not in self.ratchet.known:
                invalid.append(o)
            before = self.ratchet.cases.get(o.case_id)
            if before is None:
                new += 1
            elif rank(o.category) < rank(before):
                regressions.append((o, before))
            elif rank(o.category) > rank(before):
                improved.append((o, before))
        ok = counts["ok"]
        line = (
            f"{label}: ok {ok}/{len(outcomes)}; "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k != "ok")
            + (f"; {new} new" if new else "")
            + (f"; {len(improved)} improved (record with {self.ratchet.env}=1)" if improved else "")
        )
        print(line)
        problems = []
        if crashes:
            problems.append(f"{len(crashes)} case(s) crashed with a non-ConstrainError (translator bugs):")
            seen = set()
            for o in crashes:
                key = (o.category, o.detail)
                if key in seen:
                    continue
                seen.add(key)
                problems.append(f"  {o.case_id} [{o.category}] schema {snippet(o.schema)}\n{_indent(o.detail)}")
        if invalid:
            problems.append(f"{len(invalid)} INVALID instance(s) accepted (correctness bugs):")
            for o in invalid:
                problems.append(
                    f"  {o.case_id} ({o.description})\n      schema   {snippet(o.schema)}\n"
                    f"      instance {snippet(o.instance.decode('utf-8', 'replace'), 200)}"
                )
        if regressions and not self.ratchet.update:
            problems.append(f"{len(regressions)} case(s) got worse than the ratchet records:")
            for o, before in regressions[:50]:
                problems.append(f"  {o.case_id}: {before} -> {o.category}  {snippet(o.detail, 160)}")
            if len(regressions) > 50:
                problems.append(f"  ... and {len(regressions) - 50} more")
            problems.append(self.ratchet.hint)
        if problems:
            pytest.fail(line + "\n" + "\n".join(problems), pytrace=False)
        return line

    # -- data ------------------------------------------------------------------------------
    def suite_groups(self, rel: str) -> list[dict]:
        return json.loads((SHARED_DATA / "json-schema-test-suite" / "tests" / rel).read_text(encoding="utf-8"))

    def run_suite_file(self, rel: str, groups: list[dict], prefix: str = "", draft: Optional[str] = None) -> list[Outcome]:
        draft = draft or rel.split("/")[0]
        out: list[Outcome] = []
        for g_i, group in enumerate(groups):
            base = f"{prefix}{rel}#{g_i}"
            r = self.run_group(
                group["schema"], group["tests"], lambda i, base=base: f"{base}/{i}",
                draft=draft, file_key=f"{prefix}{rel}", resources=suite_remotes(),
            )
            out += r.outcomes
        return out

    def bench_schemas(self, subset: str, n: int) -> list[tuple[str, Any, list[dict]]]:
        """Up to n (file name, schema, tests) of a subset with at least one test, chosen by a
        fixed seed; a larger n extends a smaller one's choice."""
        for root in BENCH_ROOTS:
            folder = SHARED_DATA / root / subset
            if folder.is_dir():
                break
        else:
            pytest.skip(f"bench subset {subset} not found under {SHARED_DATA}")
        files = sorted(p.name for p in folder.glob("*.json"))
        random.Random(f"{BENCH_SEED}:{subset}").shuffle(files)
        chosen = []
        for name in files:
            if len(chosen) >= n:
                break
            doc = json.loads((folder / name).read_text(encoding="utf-8"))
            if not doc.get("tests"):
                continue
            if "schema" in doc:
                schema = doc["schema"]
            else:
                path = SHARED_DATA / doc["schema_file"]
                if not path.exists():  # e.g. the 4 MiB cloudformation schema is not shipped
                    continue
                schema = json.loads(path.read_text(encoding="utf-8"))
            chosen.append((name, schema, doc["tests"]))
        return chosen


def _indent(text: str, pad: str = "      ") -> str:
    return "\n".join(pad + line for line in text.rstrip().splitlines())
