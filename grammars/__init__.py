"""Grammars that ship with constrain, loadable by name: `constrain.grammars.load("sql")`.

json (RFC 8259), arithmetic, csv (RFC 4180), sql (a SELECT subset of SQLite's), python_expr (a
subset of Python 3 expressions), tool_call (`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`).
Each is Lark text (docs/lark.md); compile it with `Compiler.compile_lark(load(name))`.
"""

from __future__ import annotations

from importlib import resources

NAMES = ("json", "arithmetic", "csv", "sql", "python_expr", "tool_call")


def load(name: str) -> str:
    """The Lark text of the shipped grammar `name` (one of NAMES)."""
    if name not in NAMES:
        raise KeyError(f"no shipped grammar {name!r}; the shipped ones are {', '.join(NAMES)}")
    return resources.files(__name__).joinpath(f"{name}.lark").read_text(encoding="utf-8")


__all__ = ["NAMES", "load"]
