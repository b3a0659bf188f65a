"""Render the API reference (docs/api.md) from the installed package's names, signatures and docstrings.

    .venv/bin/python scripts/api_reference.py           # rewrite docs/api.md
    .venv/bin/python scripts/api_reference.py --check   # exit 1 if docs/api.md is out of date

Why generated: a hand-written reference drifts from the code; this one is the code's own words,
and tests/test_api_reference.py fails when the committed page and the package disagree.
What is documented: every name in `constrain.__all__`, then the public entry points of
constrain.kernels, constrain.specdec and constrain.grammars (their `__all__`) and of each
constrain.integrations module (its `__all__`, else the public classes and functions it defines).
Classes list their own public methods and properties (not inherited ones). The output is
deterministic: sorted names, no memory addresses, no absolute paths.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path
from typing import Any, Callable, Optional

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "api.md"
REFRESH = ".venv/bin/python scripts/api_reference.py"
SUBPACKAGES = ("constrain.kernels", "constrain.specdec", "constrain.grammars")
INTEGRATIONS = "constrain.integrations"
PUBLIC_DUNDERS = ("__call__",)  # a processor's entry point is its __call__
MAX_CONSTANT_REPR = 100


# ---------------------------------------------------------------------------------------------
# What to document
# ---------------------------------------------------------------------------------------------


def modules() -> list[tuple[str, Any, list[str]]]:
    """(module name, module, public names) in page order."""
    import constrain

    out = [("constrain", constrain, sorted(constrain.__all__, key=_sort_key))]
    for name in SUBPACKAGES:
        mod = importlib.import_module(name)
        out.append((name, mod, sorted(getattr(mod, "__all__", _defined_names(mod)), key=_sort_key)))
    pkg = importlib.import_module(INTEGRATIONS)
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        name = f"{INTEGRATIONS}.{info.name}"
        mod = importlib.import_module(name)
        out.append((name, mod, sorted(getattr(mod, "__all__", None) or _defined_names(mod), key=_sort_key)))
    return out


def _sort_key(name: str) -> tuple[str, str]:
    return (name.lower().lstrip("_"), name)


def _defined_names(mod: Any) -> list[str]:
    """Public classes and functions the module itself defines (not imported ones)."""
    return [n for n, obj in vars(mod).items()
            if not n.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
            and getattr(obj, "__module__", None) == mod.__name__]


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def render() -> str:
    mods = modules()
    lines = [
        "# API reference",
        "",
        "Generated from the package's signatures and docstrings by `scripts/api_reference.py`; do not",
        f"edit by hand. Refresh it with `{REFRESH}` (`tests/test_api_reference.py` fails",
        "when this page and the package disagree). Concepts: [concepts.md](concepts.md); all pages:",
        "[index.md](index.md).",
        "",
        "Modules: " + ", ".join(f"[`{name}`](#{_anchor(name)})" for name, _, _ in mods) + ".",
        "",
    ]
    seen: dict[int, str] = {}  # id(object) -> where it is documented first
    for mod_name, mod, names in mods:
        lines += [f'<a id="{_anchor(mod_name)}"></a>', "", f"## `{mod_name}`", ""]
        summary = _doc(mod).split("\n\n")[0]
        if summary:
            lines += [summary, ""]
        for name in names:
            if not hasattr(mod, name):
                lines += [f"### `{mod_name}.{name}`", "", "*(listed in `__all__` but not defined)*", ""]
                continue
            obj = getattr(mod, name)
            qual = f"{mod_name}.{name}"
            first = seen.get(id(obj)) if _is_documentable(obj) else None
            if first is not None:
                lines += [f"- `{qual}`: the same object as [`{first}`](#{_anchor(first)}).", ""]
                continue
            if _is_documentable(obj):
                seen[id(obj)] = qual
            lines += _entry(qual, name, obj)
    return _clean("\n".join(lines).rstrip() + "\n")


def _is_documentable(obj: Any) -> bool:
    return inspect.isclass(obj) or callable(obj)


def _entry(qual: str, name: str, obj: Any) -> list[str]:
    head = [f'<a id="{_anchor(qual)}"></a>', "", f"### `{qual}`", ""]
    if inspect.isclass(obj):
        return head + _class(name, obj)
    if callable(obj):
        return head + _code(f"def {name}{_signature(obj)}") + _docblock(obj)
    if name.startswith("HAVE_"):  # an import probe: its value depends on what is installed here
        return head + _code(f"{name}: bool  # whether the engine imports in this process") + [""]
    if type(obj).__module__ != "builtins":  # e.g. a sentinel whose class depends on the engine installed
        return head + _code(f"{name}: object  # a sentinel") + [""]
    return head + _code(f"{name}: {type(obj).__name__} = {_constant(obj)}") + [""]


def _class(name: str, cls: type) -> list[str]:
    # Only constrain's own public bases: an engine's base class is there only when it is installed.
    bases = [b.__name__ for b in cls.__bases__
             if (b.__module__ or "").startswith("constrain") and not b.__name__.startswith("_")]
    if issubclass(cls, BaseException):  # the bases say what to catch it as (ValueError, ...)
        return _code(f"class {name}({', '.join(b.__name__ for b in cls.__bases__)})") + _docblock(cls)
    if getattr(cls, "_is_protocol", False):  # an interface: its signature says nothing
        return _code(f"class {name}(Protocol)") + _docblock(cls) + _member_list(name, cls)
    kind = "dataclass" if dataclasses.is_dataclass(cls) else "class"
    out = _code(f"{kind} {name}{_signature(cls, skip_self=True)}" + (f"  # bases: {', '.join(bases)}" if bases else ""))
    return out + _docblock(cls) + _member_list(name, cls)


def _member_list(name: str, cls: type) -> list[str]:
    out: list[str] = []
    members = _members(cls)
    if members:
        out += ["Members:", ""]
        for member_name, member, what in members:
            out += [f"- `{name}.{member_name}{'' if what == 'property' else _signature(member, skip_self=what in ('method', 'classmethod'))}`"
                    + (" *(property)*" if what == "property" else " *(classmethod)*" if what == "classmethod"
                       else " *(staticmethod)*" if what == "staticmethod" else "")]
            doc = _doc(member)
            if doc:
                out += ["", _indent(doc), ""]
        out.append("")
    return out


def _members(cls: type) -> list[tuple[str, Any, str]]:
    out = []
    for name, raw in sorted(vars(cls).items(), key=lambda kv: _sort_key(kv[0])):
        if name.startswith("_") and name not in PUBLIC_DUNDERS:
            continue
        if isinstance(raw, property):
            out.append((name, raw, "property"))
        elif isinstance(raw, classmethod):
            out.append((name, raw.__func__, "classmethod"))
        elif isinstance(raw, staticmethod):
            out.append((name, raw.__func__, "staticmethod"))
        elif inspect.isfunction(raw):
            out.append((name, raw, "method"))
    if dataclasses.is_dataclass(cls):  # fields are in the class signature already
        fields = {f.name for f in dataclasses.fields(cls)}
        out = [m for m in out if m[0] not in fields]
    return out


def _signature(obj: Callable[..., Any], skip_self: bool = False) -> str:
    """The signature with string annotations written as they were typed (no quotes)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    params = list(sig.parameters.values())
    if skip_self and params and params[0].name in ("self", "cls"):
        params = params[1:]
    parts: list[str] = []
    kw_marker_done = slash_pending = False
    for p in params:
        if p.kind is p.POSITIONAL_ONLY:
            slash_pending = True
        elif slash_pending:
            parts.append("/")
            slash_pending = False
        if p.kind is p.KEYWORD_ONLY and not kw_marker_done:
            parts.append("*")
            kw_marker_done = True
        text = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        if p.kind is p.VAR_POSITIONAL:
            kw_marker_done = True
        if p.annotation is not p.empty:
            text += f": {_annotation(p.annotation)}"
        if p.default is not p.empty:
            text += f" = {_default(p.default)}" if p.annotation is not p.empty else f"={_default(p.default)}"
        parts.append(text)
    if slash_pending:
        parts.append("/")
    out = f"({', '.join(parts)})"
    if sig.return_annotation is not sig.empty and not inspect.isclass(obj):
        out += f" -> {_annotation(sig.return_annotation)}"
    return out


def _annotation(a: Any) -> str:
    if not isinstance(a, str):
        return inspect.formatannotation(a)
    if len(a) > 1 and a[0] == a[-1] and a[0] in "'\"":  # quoted in the source as well
        return a[1:-1]
    return a


def _default(value: Any) -> str:
    if inspect.isclass(value) or inspect.isfunction(value):
        return value.__name__
    return _constant(value)


def _constant(value: Any) -> str:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        try:
            if value == type(value)():
                return f"{type(value).__name__}()"
        except TypeError:  # fields without defaults
            pass
    text = repr(value)
    if isinstance(value, (frozenset, set)):
        text = "{" + ", ".join(sorted(repr(v) for v in value)) + "}" if value else repr(value)
    return text if len(text) <= MAX_CONSTANT_REPR else f"<{type(value).__name__} of {len(value) if hasattr(value, '__len__') else '?'}>"


def _doc(obj: Any) -> str:
    """The object's own docstring (never one inherited from a base class or method)."""
    raw = (obj.fget if isinstance(obj, property) else obj).__doc__
    doc = inspect.cleandoc(raw) if isinstance(raw, str) else ""
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and doc.startswith(f"{obj.__name__}("):
        return ""  # the signature dataclasses writes when there is no docstring
    return doc.strip()


def _docblock(obj: Any) -> list[str]:
    doc = _doc(obj)
    return [doc, ""] if doc else ["*(no docstring)*", ""]


def _code(text: str) -> list[str]:
    return ["```python", text, "```", ""]


def _indent(text: str) -> str:
    return "\n".join(("  " + line) if line else "" for line in text.splitlines())


def _anchor(qual: str) -> str:
    return "api-" + re.sub(r"[^a-z0-9]+", "-", qual.lower()).strip("-")


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _clean(text: str) -> str:
    """No memory addresses, no absolute paths of this machine."""
    text = _ADDRESS.sub("", text)
    for path in sorted({str(REPO), *(p for p in sys.path if p.startswith("/") and len(p) > 1), str(Path.home())},
                       key=len, reverse=True):
        text = text.replace(path + "/", "").replace(path, "<path>")
    return text


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the page instead of writing it")
    ap.add_argument("--out", default=str(PAGE), help="the page (default docs/api.md)")
    args = ap.parse_args(argv)
    text = render()
    out = Path(args.out)
    if args.check:
        current = out.read_text(encoding="utf-8") if out.exists() else ""
        if current != text:
            print(f"{out} is out of date: run `{REFRESH}` and commit it", file=sys.stderr)
            return 1
        print(f"{out} is up to date")
        return 0
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
