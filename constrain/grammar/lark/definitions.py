"""A Lark grammar's definitions as Lark's loader makes them, before any pattern or rule is
built (reader.py builds those): statements by name, `%import` of grammar files and of Lark's
built-in grammars (common, unicode, python, lark), looked up where Lark looks and their
symbols' dependencies renamed `module__NAME` as Lark does, `%declare`, `%override`, `%extend`,
and the checks Lark makes (a symbol used but not defined, defined twice, a rule in a terminal,
template arguments...). What Lark's loader must decide raises syntax.Unread."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any, Mapping, Optional, Sequence

from .dialect import imports_files
from .syntax import Definition, Expr, Statements, Unread, parse


class Imports:
    """Where `%import` finds a module, in Lark's order: each of `import_paths`, then (a relative
    import only) `folder`, the importing file's own (Lark's: the folder part of the grammar's
    source name, "" for text), then Lark's own grammars. A file is read at every load (it may
    have changed); Lark's own grammars are read once per process. `files`: the texts read
    already, by path (imported_files: a cache key's), which alone are then looked up, so that
    what is built is what the key names even if a file changes in between."""

    def __init__(self, import_paths: Sequence[str] = (), folder: Optional[str] = None,
                 files: Optional[Mapping[str, str]] = None) -> None:
        self.import_paths = tuple(import_paths)
        self.folder = folder
        self.files = files

    def module(self, path: tuple[str, ...], relative: bool) -> dict[str, Definition]:
        """The definitions of module `path`, its own imports applied."""
        found = self.file(path, relative)
        if found is not None:
            file, text = found
            statements = _parsed(text)
            defs = definitions(statements, Imports(self.import_paths, os.path.split(file)[0], self.files))
            validate(defs, statements)
            return defs
        return _module_definitions(path)

    def file(self, path: tuple[str, ...], relative: bool) -> Optional[tuple[str, str]]:
        """(path, text) of the grammar file module `path` is read from; None: Lark's own."""
        grammar_path = os.path.join(*path) + ".lark"
        for folder in self.import_paths + ((self.folder,) if relative and self.folder is not None else ()):
            file = os.path.join(folder, grammar_path)
            if self.files is not None:
                if file in self.files:
                    return file, self.files[file]
            elif os.path.isfile(file):
                try:
                    with open(file, encoding="utf-8") as fh:
                        return file, fh.read()
                except (OSError, UnicodeDecodeError):
                    raise Unread(f"module {'.'.join(path)}: {file} unreadable") from None
        if relative:
            raise Unread(f"relative module {'.'.join(path)} not found")
        if self.import_paths and imports_files(_builtin_text(path), list(self.import_paths)):
            raise Unread(f"module {'.'.join(path)} imports a file of the import paths")
        return None


def imported_files(
    text: str, import_paths: Sequence[str] = (), source: str = "<grammar>"
) -> Optional[tuple[tuple[str, str], ...]]:
    """Every grammar file the text's `%import`s read, directly or through other files, as
    (path, text) in the order met; None where our reader would leave the text to Lark's
    loader (a cache key then cannot name what the grammar depends on)."""
    out: dict[str, str] = {}
    todo = [(text, Imports(import_paths, os.path.split(source)[0]))]
    try:
        while todo:
            body, imports = todo.pop()
            for imp in _parsed(body).imports:
                found = imports.file(imp.path, imp.relative)
                if found is not None and found[0] not in out:
                    out[found[0]] = found[1]
                    todo.append((found[1], Imports(imports.import_paths, os.path.split(found[0])[0])))
    except Unread:
        return None
    return tuple(out.items())


BUILT_IN = Imports()


def definitions(statements: Statements, imports: Imports = BUILT_IN) -> dict[str, Definition]:
    """Every definition by name: imported ones (renamed), the text's own, declared terminals,
    then %override and %extend applied."""
    defs: dict[str, Definition] = {}
    modules: dict[tuple[str, ...], tuple[bool, dict[str, str]]] = {}  # (a module's imports are one, as in
    for imp in statements.imports:  # Lark: what two of them use is imported once)
        relative, names = modules.setdefault(imp.path, (imp.relative, {}))
        if relative != imp.relative:
            raise Unread(f"module {'.'.join(imp.path)} imported both relative and not")
        names.update(imp.names)
    for path, (relative, names) in modules.items():
        for name, d in _imported(path, names, imports.module(path, relative)).items():
            _define(defs, d, name)
    for d in statements.definitions:
        _define(defs, d, d.name)
    for name in statements.declared:
        _define(defs, Definition(name, None, is_term=True), name)  # type: ignore[arg-type]
    for d in statements.overrides:
        old = defs.get(d.name)
        if old is None or old.is_term != d.is_term:
            raise Unread(f"%override of {d.name}, not defined")
        defs[d.name] = d
    for d in statements.extends:
        old = defs.get(d.name)
        if old is None or old.is_term != d.is_term or old.body is None or old.params != d.params:
            raise Unread(f"%extend of {d.name}, not defined")
        defs[d.name] = Definition(d.name, ("alt", [*old.body[1], *d.body[1]]), old.params, old.modifiers, old.is_term,
                                  old.shortest)
    return defs


def _define(defs: dict[str, Definition], d: Definition, name: str) -> None:
    if name in defs:
        raise Unread(f"{name} defined twice")
    defs[name] = d


def _imported(path: tuple[str, ...], names: dict[str, str], module: dict[str, Definition]) -> dict[str, Definition]:
    """The definitions `%import path (names)` brings from `module`: the names (as their
    aliases) and what they use, renamed `path__NAME` (a `_NAME` as `_path__NAME`)."""
    prefix = "__".join(path)
    wanted = list(names)
    needed: list[str] = []
    seen: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        d = module.get(name)
        if d is None:
            raise Unread(f"{name} is not in {prefix}")
        seen.add(name)
        needed.append(name)
        if d.body is not None:
            wanted.extend(s for s in _symbols(d.body) if s not in d.params)

    def mangled(name: str) -> str:
        if name in names:
            return names[name]
        return f"_{prefix}__{name[1:]}" if name.startswith("_") else f"{prefix}__{name}"

    out: dict[str, Definition] = {}
    for name in needed:
        d = module[name]
        body = None if d.body is None else renamed(d.body, {s: mangled(s) for s in _symbols(d.body) if s not in d.params})
        new = mangled(name)
        out[new] = Definition(new, body, d.params, d.modifiers, d.is_term, d.shortest)  # type: ignore[arg-type]
    return out


@lru_cache(maxsize=None)
def _module_definitions(path: tuple[str, ...]) -> dict[str, Definition]:
    """One of Lark's own grammars (grammars/ in the lark package), read once per process."""
    statements = parse(_builtin_text(path))
    defs = definitions(statements)
    validate(defs, statements)
    return defs


@lru_cache(maxsize=None)
def _builtin_text(path: tuple[str, ...]) -> str:
    import lark

    file = os.path.join(os.path.dirname(lark.__file__), "grammars", *path) + ".lark"
    if not os.path.isfile(file):
        raise Unread(f"module {'.'.join(path)} is no grammar of Lark's own")
    with open(file, encoding="utf-8") as fh:
        return fh.read()


@lru_cache(maxsize=64)
def _parsed(text: str) -> Statements:
    """A module file's statements (kept by text: never written to)."""
    return parse(text)


def _symbols(e: Expr) -> set[str]:
    """The names an expression refers to (symbols and templates, their arguments too)."""
    out: set[str] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, list):
            stack.extend(x)
            continue
        kind = x[0]
        if kind == "sym":
            out.add(x[1])
        elif kind == "tmpl":
            out.add(x[1])
            stack.extend(x[2])
        elif kind in ("alt", "and"):
            stack.extend(x[1])
        elif kind in ("rep", "maybe", "alias", "not"):
            stack.append(x[1])
    return out


def renamed(e: Any, names: dict[str, Any]) -> Any:
    """`e` with each symbol replaced: by a name (str) or by an expression (template arguments)."""
    if isinstance(e, list):
        return [renamed(x, names) for x in e]
    kind = e[0]
    if kind == "sym":
        new = names.get(e[1], e[1])
        return ("sym", new) if isinstance(new, str) else new
    if kind == "tmpl":
        head = names.get(e[1], e[1])
        if not isinstance(head, str):
            raise Unread("a template parameter used as a template")
        return ("tmpl", head, [renamed(a, names) for a in e[2]])
    if kind in ("alt", "and"):
        return (kind, [renamed(s, names) for s in e[1]])
    if kind == "not":
        return ("not", renamed(e[1], names))
    if kind == "rep":
        return ("rep", renamed(e[1], names), e[2], e[3])
    if kind == "maybe":
        return ("maybe", renamed(e[1], names))
    if kind == "alias":
        return ("alias", renamed(e[1], names), e[2])
    return e


def validate(defs: dict[str, Definition], statements: Statements) -> None:
    """Lark's checks: every symbol defined (or a parameter), templates used with their number
    of arguments and only as templates, parameters unique and no definitions' names."""
    for d in defs.values():
        if len(set(d.params)) != len(d.params) or any(p in defs for p in d.params):
            raise Unread(f"template parameters of {d.name}")
        if d.body is None:
            continue
        for x in walk(d.body):
            if x[0] == "sym" and x[1] not in d.params:
                used = defs.get(x[1])
                if used is None or used.params:
                    raise Unread(f"{x[1]} used but not defined, or a template without arguments")
            elif x[0] == "tmpl":
                used = defs.get(x[1])
                if used is None or len(used.params) != len(x[2]) or used.is_term:
                    raise Unread(f"template {x[1]} used wrongly")
            elif x[0] == "alias" and (d.is_term or d.name.startswith("_")):
                raise Unread(f"an alias in {d.name}")
        if d.modifiers and "?" in d.modifiers and d.name.startswith("_"):
            raise Unread(f"?{d.name}")
    for ignored in statements.ignores:
        for x in walk(ignored):
            if x[0] == "sym" and x[1] not in defs:
                raise Unread(f"ignored {x[1]} not defined")


def walk(e: Any) -> list:
    """Every sub-expression of `e`, each before its parts, in order (a list built with a stack:
    recursive generators cost ~0.4 ms of reading SQL's grammar)."""
    out = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, list):
            stack.extend(reversed(x))
            continue
        out.append(x)
        kind = x[0]
        if kind in ("alt", "and"):
            stack.extend(reversed(x[1]))
        elif kind in ("rep", "maybe", "alias", "not"):
            stack.append(x[1])
        elif kind == "tmpl":
            stack.extend(reversed(x[2]))
    return out
