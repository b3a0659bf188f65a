"""`constrain check`: what a compile would do with each keyword of a JSON Schema (enforced,
relaxed, refused, not enforced, annotation, ignored), from constrain.check_schema; no model and
no vocabulary needed. Exit 1 when a strict compile refuses the schema."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from ..errors import CommandLineError, ConstrainError
from ..grammar.json_schema.report import SchemaReport, check_schema
from .output import fail, flag_names, one_line
from .sources import schema_source

ORDER = ("enforced", "relaxed", "refused", "not enforced", "annotation", "ignored")
MEANING = {
    "enforced": "every generated document satisfies it",
    "relaxed": "refused by a strict compile; --no-strict enforces a wider constraint",
    "refused": "cannot be enforced: no compile accepts it",
    "not enforced": "a format that is not checked (the string's type and length still are)",
    "annotation": "has no effect on validity",
    "ignored": "not a JSON Schema keyword constrain knows",
}


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "check", help="show which keywords of a JSON Schema are enforced, relaxed or refused",
        description="Report what a compile does with each keyword of a JSON Schema. Exit 1 if a strict "
        "compile refuses the schema.",
    )
    p.add_argument("schema", metavar="SCHEMA", help="a JSON Schema file ('-' reads stdin)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    source = schema_source(args.schema)
    try:
        report = check_schema(source.text)
    except ConstrainError as exc:
        raise CommandLineError(f"{source.label}: {one_line(str(exc))}") from exc
    print(json.dumps(_as_json(report)) if args.json else _table(report))
    if report.strict_error is not None:
        fail(f"{source.label}: a strict compile refuses this schema: {flag_names(one_line(report.strict_error))}")
    return 0


def _as_json(report: SchemaReport) -> dict[str, Any]:
    return {
        "keywords": [{"pointer": u.pointer, "keyword": u.keyword, "status": u.status} for u in report.uses],
        "counts": dict(Counter(u.status for u in report.uses)),
        "strict_ok": report.strict_error is None,
        "strict_error": report.strict_error,
        "relaxations": list(report.relaxations),
    }


def _table(report: SchemaReport) -> str:
    width = max([len("keyword"), *(len(u.pointer) for u in report.uses)])
    lines = [f"{'keyword':<{width}}  status"]
    lines += [f"{u.pointer:<{width}}  {u.status}" for u in report.uses]
    counts = Counter(u.status for u in report.uses)
    lines.append("")
    for status in ORDER:
        if counts[status]:
            lines.append(f"{counts[status]:>4} {status:<13} {MEANING[status]}")
    if report.strict_error is None:
        lines.append("strict compile: ok")
    else:
        lines.append(f"strict compile: refused: {flag_names(one_line(report.strict_error))}")
    lines += [f"with --no-strict: {one_line(r)}" for r in report.relaxations]
    return "\n".join(lines)
