"""`constrain bench`: list the benchmarks that ship with the package (benchmarks/ installed as
constrain.benchmarks) or run one in a subprocess of this interpreter, as
`python -m constrain.benchmarks.NAME` would. Its output is the benchmark's own; its exit status is ours."""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from importlib import resources
from typing import Any

from .output import fail, note

PACKAGE = "constrain.benchmarks"


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "bench", help="list the benchmarks, or run one",
        description="Without NAME, list the benchmarks; with it, run that one. Arguments after -- go "
        "to the benchmark (see constrain bench NAME -- --help).",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="the benchmark to run")
    p.add_argument("--quick", action="store_true", help="a shorter, rougher run")
    p.set_defaults(run=run, takes_extra=True)


def benchmarks() -> dict[str, str]:
    """The runnable benchmarks (modules with a __main__ block), each with its docstring's summary."""
    found = {}
    for entry in sorted(resources.files(PACKAGE).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".py") or entry.name.startswith("_"):
            continue
        text = entry.read_text(encoding="utf-8")
        if 'if __name__ == "__main__":' not in text:
            continue  # a helper module (engines, report, workloads)
        doc = ast.get_docstring(ast.parse(text)) or ""
        found[entry.name[:-3]] = _summary(doc)
    return found


def _summary(doc: str, width: int = 100) -> str:
    """The docstring's first paragraph on one line, cut at a word near `width`."""
    line = " ".join(doc.split("\n\n")[0].split())
    return line if len(line) <= width else line[: width - 3].rsplit(" ", 1)[0] + "..."


def run(args: argparse.Namespace) -> int:
    available = benchmarks()
    if args.name is None:
        if args.quick or args.extra:
            fail("name the benchmark to run: constrain bench NAME [--quick] [-- ARGS]", 2)
        width = max(len(n) for n in available)
        print("\n".join(f"{name:<{width}}  {line}" for name, line in available.items()))
        return 0
    if args.name not in available:
        fail(f"unknown benchmark {args.name!r}; the benchmarks are {', '.join(available)}", 2)
    # as `python -m`, less its putting the working directory first on sys.path: inside a
    # checkout, ./constrain would shadow the installed package
    launch = f"import runpy, sys; del sys.path[0]; runpy.run_module('{PACKAGE}.{args.name}', run_name='__main__', alter_sys=True)"
    command = [sys.executable, "-c", launch, *(["--quick"] if args.quick else []), *args.extra]
    try:
        code = subprocess.call(command)
    except KeyboardInterrupt:
        return 130
    if code:
        note(f"benchmark {args.name} exited with status {code}")
    return code
