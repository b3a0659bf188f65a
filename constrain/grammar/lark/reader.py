"""A Lark grammar's rules and terminals without Lark's loader (syntax.py reads the text).

What Lark's loader makes of a grammar that matters to its language, built directly:
- definitions (definitions.py), with `%import` of grammar files and of Lark's own grammars
  (common, unicode, python, lark), looked up where Lark looks, their symbols' dependencies
  renamed `module__NAME` as Lark does; `%declare`, `%override`, `%extend`, and the checks Lark
  makes (a symbol used but not defined, defined twice, a rule in a terminal, a recursive
  terminal, template arguments...); an empty literal `""`, which Lark refuses, is the empty
  text as llguidance reads it;
- each terminal's pattern as Lark composes it (a regex text joined from its parts, flags
  wrapped as `(?i:...)`: a lookaround in one part sees the text after it, as in Lark), with
  Lark's own literal escaping (`eval_escaping`) and pattern classes, so terminals.py lowers
  them exactly as it lowers Lark's;
- rules as alternatives of symbol sequences: groups, `?` and `[...]` multiplied out as Lark
  does up to an expansion's first terminal, and after it kept as Group items (below);
  `x+` and `x*` as left-recursive helper rules (left_recursion.py folds them into iteration),
  `x ~ n..m` as n..m copies; string and regex literals as anonymous terminals; template uses as
  rules of their own. Priorities, aliases and `?`/`!`/`_` shape trees only.

Lark multiplies every optional part and group out into copies of the whole rule (SQLite's
`create_trigger_stmt`: 1,920 copies, 33,920 symbols), which the lowering then had to factor
back. Past an expansion's first terminal no left corner, nullable prefix or left recursion can
be, so a group there stays one item (left_recursion.Group): the same language, written once.
Before the first terminal, and in rules whose `[...]` or aliases could make two alternatives
the same (Lark refuses those: duplicates must be seen), everything is multiplied out as Lark does.

Anything else raises syntax.Unread and Lark's loader takes the text (a syntax error: Lark's
messages say where). Test: tests/grammar/test_lark_reader.py, against Lark's loader on the
shipped grammars and on ../shared/data/lark-grammars.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from ...errors import UnsupportedGrammarError
from .definitions import Imports, definitions, renamed, validate, walk
from .left_recursion import Group, symbols
from .regex_algebra import Algebra
from .syntax import MAX_RULE_COUNT, Definition, Expr, Unread, parse

MAX_EXPANSIONS = 4096  # alternatives one rule may multiply out to (beyond: Lark's loader decides)
MAX_REPEAT = MAX_RULE_COUNT  # the largest `~ n..m` bound written out as copies (beyond: Lark's loader)


@dataclass(frozen=True)
class LoadedGrammar:
    """`terminals`: name -> Lark pattern (PatternStr / PatternRE; None for %declare), those the
    rules use and the ignored ones; `rules`: name -> alternatives (tuples of symbol names and,
    from our reader, Groups); `ignore`: the names of the %ignore terminals."""

    terminals: dict[str, Any]
    rules: dict[str, list[tuple[str, ...]]]
    ignore: list[str]
    shortest: frozenset[str] = frozenset()  # terminals taking their shortest match (llguidance's [lazy])


def read_grammar(text: str, start: str, import_paths: Sequence[str] = (), source: str = "<grammar>",
                 files: Optional[Mapping[str, str]] = None) -> LoadedGrammar:
    """The grammar of `text` from rule `start`; raises Unread where Lark's loader must decide.
    `%import` looks in `import_paths`, then (relative imports) in `source`'s folder, as Lark's
    loader does with the same arguments; among `files` alone where given (Imports)."""
    statements = parse(text)
    defs = definitions(statements, Imports(import_paths, os.path.split(source)[0], files))
    validate(defs, statements)
    if start in defs and defs[start].shortest:  # (`start[lazy]: ...`: a rule of one lexeme, named apart)
        lexeme = f"{start}%lexeme"  # (no Lark name holds `%`)
        defs[lexeme] = dataclasses.replace(defs[start], name=lexeme)
        defs[start] = Definition(start, ("alt", [[("sym", lexeme)]]))
    if start not in defs or defs[start].is_term or defs[start].params:
        raise Unread(f"no rule {start}")
    return _Builder(defs).build(start, statements.ignores)


# ---- terminals and rules ----


def _evaluated(body: str) -> str:
    """A literal's body as Lark reads it (its eval_escaping: a Python literal_eval per string,
    ~10 us each; SQL has ninety): text without a backslash, quote, CR or NUL reads as itself."""
    if not any(c in body for c in "\\'\r\x00"):
        return body
    from lark.load_grammar import eval_escaping

    return eval_escaping(body)


class _Builder:
    def __init__(self, defs: dict[str, Definition]) -> None:
        from lark.lexer import PatternRE, PatternStr

        self.defs = defs
        self.PatternRE, self.PatternStr, self.eval_escaping = PatternRE, PatternStr, _evaluated
        self.patterns: dict[str, Any] = {}  # terminal name -> pattern
        self.rules: dict[str, list[tuple[str, ...]]] = {}
        self.anonymous: dict[Any, str] = {}  # pattern -> its anonymous terminal's name
        self.helpers: dict[tuple, str] = {}  # a repetition's alternatives -> its helper rule
        self.full = True  # (multiply every group out, as Lark does: the rule has [...] or aliases)
        self.pending: list[tuple[str, Expr]] = []

    def build(self, start: str, ignores: list[Expr]) -> LoadedGrammar:
        for name, d in self.defs.items():  # (every terminal's pattern: Lark reports bad ones unused too)
            if d.is_term:
                self.term_pattern(name, ())
        ignore: list[str] = []
        for k, e in enumerate(ignores):
            if len(e[1]) == 1 and len(e[1][0]) == 1 and e[1][0][0][0] == "sym":
                name = e[1][0][0][1]
                if not self.defs[name].is_term or self.defs[name].body is None:
                    raise Unread("an ignored rule or declared terminal")
            else:
                name = f"__IGNORE_{k}"
                self.patterns[name] = self.pattern(e, (name,))
            ignore.append(name)
        for name, d in self.defs.items():
            if not d.is_term and not d.params:
                self.pending.append((name, d.body))
        while self.pending:
            name, body = self.pending.pop()
            if name not in self.rules:
                self.rules[name] = []  # (claimed before its body: recursion)
                self.rules[name] = self.rule_alternatives(name, body)
        reached = self.reachable(start)
        rules = {name: exps for name, exps in self.rules.items() if name in reached}
        terminals: dict[str, Any] = {}
        for exps in rules.values():
            for exp in exps:
                for s in symbols(exp):
                    if s not in rules and s not in terminals:
                        terminals[s] = self.patterns.get(s)
        for name in ignore:
            terminals[name] = self.patterns.get(name)
        shortest = frozenset(n for n in terminals if n in self.defs and self.defs[n].shortest)
        return LoadedGrammar(terminals, rules, ignore, shortest)

    def reachable(self, start: str) -> set[str]:
        seen = {start}
        stack = [start]
        while stack:
            for exp in self.rules[stack.pop()]:
                for s in symbols(exp):
                    if s in self.rules and s not in seen:
                        seen.add(s)
                        stack.append(s)
        return seen

    # -- terminals --

    def term_pattern(self, name: str, active: tuple[str, ...]) -> Any:
        if name in self.patterns:
            return self.patterns[name]
        if name in active:
            raise Unread(f"recursion in terminal {name}")
        d = self.defs[name]
        if d.body is None:
            self.patterns[name] = None
            return None
        if len(d.body[1]) == 1 and not d.body[1][0]:
            raise Unread(f"terminal {name} is empty")
        grouped = d.shortest or any(x[0] in ("and", "not") for x in walk(d.body))  # (llguidance's alone)
        p = self.pattern(d.body, (*active, name), grouped)
        self.patterns[name] = p
        return p

    def pattern(self, e: Any, active: tuple[str, ...], grouped: bool = False) -> Any:
        """A terminal expression as one pattern, composed as Lark composes it: a sequence's
        regexes joined as they are, so `/a|b/ "c"` is `a|bc`. In what only llguidance has (a
        lazy rule's body, `&` and `~`), `grouped`: each part is a group, `(?:a|b)c`, as there."""
        if isinstance(e, list):  # a sequence
            if not e:
                return self.PatternStr("")
            parts = [self.pattern(x, active, grouped) for x in e]
            if len(parts) == 1:
                return parts[0]
            if any(isinstance(p, Algebra) for p in parts):
                return Algebra("seq", tuple(parts))
            return self.PatternRE("".join(("(?:%s)" if grouped else "%s") % p.to_regexp() for p in parts), ())
        kind = e[0]
        if kind == "alt":
            parts = [self.pattern(s, active, grouped) for s in e[1]]
            if len(parts) == 1:
                return parts[0]
            if any(isinstance(p, Algebra) for p in parts):
                return Algebra("alt", tuple(parts))
            return self.PatternRE("(?:%s)" % "|".join(p.to_regexp() for p in parts), ())
        if kind in ("and", "not"):  # (llguidance's & and ~: no regex text says them)
            return Algebra(kind, tuple(self.pattern(s, active, True) for s in (e[1] if kind == "and" else [e[1]])))
        if kind in ("rep", "maybe"):
            inner = self.pattern(e[1], active, grouped)
            lo, hi = (e[2], e[3]) if kind == "rep" else (0, 1)
            if isinstance(inner, Algebra):
                return Algebra("rep", (inner,), lo, hi)
            op = {(0, 1): "?", (0, None): "*", (1, None): "+"}.get((lo, hi)) or (
                "{%d}" % lo if lo == hi else "{%d,}" % lo if hi is None else "{%d,%d}" % (lo, hi))
            return self.PatternRE("(?:%s)%s" % (inner.to_regexp(), op), inner.flags)
        if kind == "sym":
            used = self.defs[e[1]]
            if not used.is_term:
                if active and self.defs[active[0]].shortest:
                    raise UnsupportedGrammarError("llguidance option 'lazy' on a rule that uses rules",
                                                  f"rule {active[0]}",
                                                  f"{e[1]} is a rule; a lazy rule is one lexeme, of terminals only")
                raise Unread(f"rule {e[1]} in a terminal")
            if used.shortest and active:
                raise UnsupportedGrammarError("a lazy rule inside a terminal", f"terminal {active[-1]}",
                                              f"{e[1]} takes its shortest match, which a terminal's regex cannot say")
            p = self.term_pattern(e[1], active)
            if p is None:
                raise Unread(f"declared terminal {e[1]} in a terminal")
            return p
        if kind in ("str", "re"):
            return self.literal(e[1])
        if kind == "range":
            return self.range(e[1], e[2])
        raise Unread(f"{kind} in a terminal")

    def literal(self, written: str) -> Any:
        quote = written[0]
        end = written.rfind(quote)
        body, flags = written[1:end], written[end + 1 :]
        if quote == "/" and "\n" in written and "x" not in flags:
            raise Unread("a newline in a regex without the x flag")
        try:
            value = self.eval_escaping(body)
        except Exception as exc:  # (Lark's GrammarError on a bad escape)
            raise Unread(f"literal {written}: {exc}") from None
        if quote == '"':
            return self.PatternStr(value.replace("\\\\", "\\"), flags)
        return self.PatternRE(value, flags)

    def range(self, a: str, b: str) -> Any:
        lo, hi = a[1:-1], b[1:-1]
        if a.endswith("i") or b.endswith("i"):
            raise Unread("a range of strings with flags")
        try:
            ok = len(self.eval_escaping(lo)) == len(self.eval_escaping(hi)) == 1
        except Exception:
            ok = False
        if not ok:
            raise Unread("a range of longer strings")
        return self.PatternRE("[%s-%s]" % (lo, hi))

    # -- rules --

    def rule_alternatives(self, name: str, body: Expr) -> list[tuple[str, ...]]:
        """Repeated alternatives are one, as in Lark, also where `[...]` or aliases make them
        (`[x] x?`): Lark refuses those rules (its `[x]` leaves placeholders that tell the copies
        apart for its trees), llguidance reads them, and their language is plain."""
        kinds = {x[0] for x in walk(body)}
        self.full = "maybe" in kinds or "alias" in kinds
        if "and" in kinds or "not" in kinds:
            raise UnsupportedGrammarError("llguidance's & or ~ in a rule", f"rule {name}",
                                          "they combine terminals only (as in llguidance): define a terminal with them")
        return self.alternatives(body)

    def alternatives(self, e: Any) -> list[tuple[str, ...]]:
        if isinstance(e, list):  # a sequence: the product of its items' alternatives (a group
            product: list[tuple] = [()]  # after a terminal: one item)
            for x in e:
                options = self.alternatives(x)
                if len(options) == 1:
                    product = [a + options[0] for a in product]
                    continue
                grouped = None
                out: list[tuple] = []
                for a in product:
                    if self.full or not self.has_terminal(a):
                        out.extend(a + b for b in options)
                    else:
                        grouped = grouped or _group(options)
                        out.append(a + grouped)
                if len(out) > MAX_EXPANSIONS:
                    raise Unread("too many alternatives")
                product = out
            return self.distinct(product)
        kind = e[0]
        if kind == "alt":
            out: list[tuple[str, ...]] = []
            for s in e[1]:
                out.extend(self.alternatives(s))
            return self.distinct(out)
        if kind == "alias":
            return self.alternatives(e[1])
        if kind == "rep":
            return self.repeat(e[1], e[2], e[3])
        if kind == "maybe":
            return self.distinct([*self.alternatives(e[1]), ()])
        if kind == "sym":
            return [(e[1],)]
        if kind == "tmpl":
            return [(self.instance(e),)]
        if kind in ("str", "re", "range"):
            p = self.literal(e[1]) if kind != "range" else self.range(e[1], e[2])
            if not p.value:  # (`""`: nothing, as llguidance reads it; Lark refuses it)
                return [()]
            name = self.anonymous.get(p)
            if name is None:
                name = self.anonymous[p] = f"__ANON_{len(self.anonymous)}"
                self.patterns[name] = p
            return [(name,)]
        raise Unread(f"{kind} in a rule")

    def repeat(self, e: Any, lo: int, hi: Optional[int]) -> list[tuple[str, ...]]:
        options = self.alternatives(e)
        if (lo, hi) == (0, 1):
            return self.distinct([*options, ()])
        if max(lo, hi or 0) > MAX_REPEAT:
            raise Unread("a long ~ repeat")
        unit = options[0] if len(options) == 1 and len(options[0]) == 1 else (self.helper(("one", tuple(options)), lambda h: options),)
        if hi is None:  # x+ as H: x | H x (Lark's shape); x* as H or nothing; x{3,} as x x x*
            helper = self.helper(("plus", tuple(options)), lambda h: [*options, *((h,) + o for o in options)])
            if lo <= 1:
                return [(helper,)] if lo == 1 else [(helper,), ()]
            return [unit * lo + (helper,), unit * lo]
        return [unit * k for k in range(lo, hi + 1)]

    def has_terminal(self, expansion: tuple) -> bool:
        """Does the expansion hold a terminal (a group after it stays one item)?"""
        for s in expansion:
            if isinstance(s, str) and (s in self.patterns or (s in self.defs and self.defs[s].is_term)):
                return True
        return False

    def distinct(self, alternatives: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        return list(dict.fromkeys(alternatives))

    def helper(self, key: tuple, alternatives) -> str:
        name = self.helpers.get(key)
        if name is None:
            name = self.helpers[key] = f"__rep_{len(self.helpers)}"
            self.rules[name] = alternatives(name)
        return name

    def instance(self, e: Expr) -> str:
        """A template use as a rule of its own (one per template and arguments)."""
        args = [self.argument(a) for a in e[2]]
        name = f"{e[1]}{{{','.join(n for n, _ in args)}}}"
        if name not in self.rules and all(name != p[0] for p in self.pending):
            d = self.defs[e[1]]
            body = renamed(d.body, {p: a for p, (_, a) in zip(d.params, args)})
            self.pending.append((name, body))
        return name

    def argument(self, a: Expr) -> tuple[str, Expr]:
        """A template argument as (its name in the instance's name, the expression it stands for)."""
        kind = a[0]
        if kind == "sym":
            return a[1], a
        if kind == "tmpl":
            return self.instance(a), ("sym", self.instance(a))
        (name,) = self.alternatives(a)[0]
        return name, ("sym", name)


def _group(options: list[tuple]) -> tuple:
    """Alternatives (one of them maybe empty) as an expansion of one Group item."""
    kept = tuple(o for o in options if o)
    return (Group(kept, len(kept) < len(options)),)
