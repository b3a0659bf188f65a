"""The Lark grammar language read into statements (our own reader; reader.py builds on it).

Lark's loader parses a grammar with an LALR parser of its own grammar language and then
rewrites the tree with a dozen transformer passes: ~17 ms of SQL's 40 ms cold compile. This
module is a hand-written tokenizer and recursive-descent parser of the same language (its
tokens and productions as Lark documents them: statements end at a newline, a line that starts
with `|` continues the alternatives, `//` and `#` comments, `\\` line continuations).

It reads what it can and raises `Unread` for anything else (a syntax error, a construct it does
not know): the caller then hands the text to Lark's own loader, which either loads it or says
what is wrong with line and column. So this reader needs no error messages of its own, only
never to accept a text differently from Lark.

Expressions are tuples: ("alt", [seq, ...]) where a seq is a list of expressions, ("rep", e,
lo, hi) (hi None: no bound; `e ~ n..m`, llguidance's `e{m,n}`), ("maybe", e) (`[e]`: as
`e?`, but Lark tells its empty alternative apart), ("sym", name), ("tmpl", name, [args]),
("str", token), ("re", token) (the literal as written, flags included), ("range", token, token), and
("alias", seq, name) for an alternative with `-> name`; llguidance's ("and", [seq, ...]) and
("not", e) for `a & b` and `~a` (terminals only).

llguidance's rule options (`name[lazy, suffix="x", capture]: ...`), which Lark's syntax has no
room for, are read here (`_Parser.options`); those we cannot honour raise UnsupportedGrammarError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from ...errors import UnsupportedGrammarError

Expr = tuple


class Unread(Exception):
    """A text this reader does not take (Lark's loader decides)."""


_RE_FLAGS = "imslux"
_TOKEN = re.compile(
    r"""[ \t]*(?:(?P<STRING>"(?:\\"|\\\\|[^"\n])*?"i?)
      |(?P<REGEXP>/(?!/)(?:\\/|\\\\|[^/])*?/[imslux]*)
      |(?P<COMMENT>\s*//[^\n]*|\s*\#[^\n]*)
      |(?P<NL_OR>(?:\r?\n)+\s*\|)
      |(?P<NL>(?:\r?\n)+\s*)
      |(?P<WS>[ \t]+)
      |(?P<BACKSLASH>\\[ ]*\n)
      |(?P<TO>->)
      |(?P<DOTDOT>\.\.)
      |(?P<DIRECTIVE>%[a-z]+)
      |(?P<MODIFIERS>(?:!\??|\?!?)(?=[_a-z]))
      |(?P<NAME>_?[A-Za-z](?:[_A-Za-z0-9]|-(?!>))*)
      |(?P<NUMBER>[+-]?\d+)
      |(?P<PUNCT>[()\[\]{}:,|.~+*?=&]))
    """,
    re.X,
)
_RULE_NAME = re.compile(r"_?[a-z][-_a-z0-9]*\Z")  # (`-` inside a name: llguidance's, not Lark's)
_TERM_NAME = re.compile(r"_?[A-Z][-_A-Z0-9]*\Z")


def is_rule_name(name: str) -> bool:
    return _RULE_NAME.match(name) is not None


def is_term_name(name: str) -> bool:
    return _TERM_NAME.match(name) is not None


def tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) pairs; comments, spaces and continuations dropped; one NL ends the text.
    (Spaces before a token are read with it: a third fewer matches in a usual grammar.)"""
    out: list[tuple[str, str]] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos or m.end() == pos:
            raise Unread(f"no token at {pos}")
        pos = m.end()
        kind = m.lastgroup
        if kind is None or kind in _DROPPED:  # (None: spaces at the very end)
            continue
        value = m.group(kind)
        # A name is all lower case (a rule) or all upper case (a terminal), as the token's
        # pattern makes it ASCII: Lark refuses the mixed ones.
        if kind == "NAME" and value.lower() != value and value.upper() != value:
            raise Unread(f"a name of mixed case at {m.start(kind)}")
        out.append((kind, value))
    if pos != len(text):
        raise Unread(f"no token at {pos}")
    out.append(("NL", "\n"))
    return out


_DROPPED = frozenset(("COMMENT", "WS", "BACKSLASH"))
MAX_RULE_COUNT = 256  # llguidance's `x{m,n}` in a rule, written out as copies (reader.MAX_REPEAT)
_REFUSED_OPTIONS = {
    "stop": "its stop text is hidden from the model by taking tokens back, which constrain's matcher "
            "does not do; write suffix=... (the text stays) or lazy",
    "max_tokens": "a token budget per rule is not enforced; bound the text's length in the rule instead",
    "temperature": "a sampling temperature per rule is not applied; sampling parameters are per request",
}


@dataclass
class Definition:
    """A rule or a terminal: `name{params}.priority: body`."""

    name: str
    body: Expr
    params: tuple[str, ...] = ()
    modifiers: str = ""
    is_term: bool = False
    shortest: bool = False  # llguidance's `[lazy]` (or `suffix=`): a terminal taking its shortest match


class Import(NamedTuple):
    """`%import path (names)`: name -> alias; `relative`: `%import .path...` (the importing
    file's folder is searched, after the import paths)."""

    path: tuple[str, ...]
    names: dict[str, str]
    relative: bool


@dataclass
class Statements:
    definitions: list[Definition] = field(default_factory=list)
    overrides: list[Definition] = field(default_factory=list)
    extends: list[Definition] = field(default_factory=list)
    ignores: list[Expr] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    declared: list[str] = field(default_factory=list)


def parse(text: str) -> Statements:
    """The statements of a grammar text (raises Unread for anything this reader does not take)."""
    return _Parser(tokens(text)).statements()


class _Parser:
    def __init__(self, toks: list[tuple[str, str]]) -> None:
        self.toks = toks
        self.i = 0
        self.rule: Optional[str] = None  # (the rule whose body is read; None in a terminal)

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i]

    def take(self, kind: str, value: Optional[str] = None) -> str:
        k, v = self.toks[self.i]
        if k != kind or (value is not None and v != value):
            raise Unread(f"expected {value or kind}, got {v!r}")
        self.i += 1
        return v

    def at(self, kind: str, value: Optional[str] = None) -> bool:
        k, v = self.toks[self.i]
        return k == kind and (value is None or v == value)

    def statements(self) -> Statements:
        out = Statements()
        while self.i < len(self.toks):
            if self.at("NL"):
                self.i += 1
                continue
            kind, value = self.peek()
            if kind == "DIRECTIVE":
                self.i += 1
                self.directive(value, out)
            else:
                out.definitions.append(self.definition())
            self.take("NL")
        return out

    def directive(self, word: str, out: Statements) -> None:
        if word == "%ignore":
            self.rule = None  # (an ignored pattern is a terminal's)
            out.ignores.append(self.expansions())
        elif word == "%import":
            out.imports.append(self.import_())
        elif word == "%declare":
            while self.at("NAME"):
                name = self.take("NAME")
                if not is_term_name(name):
                    raise Unread("a declared rule")
                out.declared.append(name)
            if not out.declared:
                raise Unread("an empty %declare")
        elif word == "%override":
            out.overrides.append(self.definition())
        elif word == "%extend":
            out.extends.append(self.definition())
        else:
            raise Unread(f"directive {word}")

    def import_(self) -> Import:
        relative = self.at("PUNCT", ".")
        if relative:
            self.i += 1
        path = [self.take("NAME")]
        while self.at("PUNCT", "."):
            self.i += 1
            path.append(self.take("NAME"))
        if self.at("PUNCT", "("):
            self.i += 1
            names = [self.take("NAME")]
            while self.at("PUNCT", ","):
                self.i += 1
                names.append(self.take("NAME"))
            self.take("PUNCT", ")")
            return Import(tuple(path), {n: n for n in names}, relative)
        if len(path) < 2:
            raise Unread("an import of nothing")
        alias = path[-1]
        if self.at("TO"):
            self.i += 1
            alias = self.take("NAME")
            if is_rule_name(alias) != is_rule_name(path[-1]):
                raise Unread("an alias of the other kind")
        return Import(tuple(path[:-1]), {path[-1]: alias}, relative)

    def definition(self) -> Definition:
        modifiers = self.take("MODIFIERS") if self.at("MODIFIERS") else ""
        name = self.take("NAME")
        is_term = is_term_name(name)
        if is_term and modifiers:
            raise Unread("modifiers on a terminal")
        params: list[str] = []
        if self.at("PUNCT", "{"):
            if is_term:
                raise Unread("a terminal template")
            self.i += 1
            params.append(self.take("NAME"))
            while self.at("PUNCT", ","):
                self.i += 1
                params.append(self.take("NAME"))
            self.take("PUNCT", "}")
            if not all(is_rule_name(p) for p in params):
                raise Unread("a template parameter that is no rule name")
        options = self.options(name) if self.at("PUNCT", "[") else {}
        self.rule = None if is_term or "lazy" in options or "suffix" in options else name
        if self.at("PUNCT", "."):
            self.i += 1
            self.take("NUMBER")  # (a priority: which parse Lark builds, not which texts parse)
        self.take("PUNCT", ":")
        body = self.expansions()
        if "suffix" in options:  # (what the lexeme must end with: part of its text)
            body = ("alt", [[body, options["suffix"]]])
        shortest = "lazy" in options or "suffix" in options
        return Definition(name, body, tuple(params), modifiers, is_term or shortest, shortest)

    def options(self, name: str) -> dict[str, Any]:
        """llguidance's `[capture, lazy, suffix="x", ...]` after a rule's name: those that do
        not change the language (captures) are dropped; `lazy` and `suffix` make the rule one
        lexeme taking its shortest match (with the suffix at its end); token budgets,
        temperatures and hidden stop strings need an engine that backtracks or samples per
        rule, so they are refused by name."""
        where = f"{'terminal' if is_term_name(name) else 'rule'} {name}"
        self.take("PUNCT", "[")
        out: dict[str, Any] = {}
        while True:
            option = self.take("NAME")
            if option in _REFUSED_OPTIONS:
                raise UnsupportedGrammarError(f"llguidance option {option!r}", where, _REFUSED_OPTIONS[option])
            if option not in ("capture", "stop_capture", "lazy", "suffix"):
                raise UnsupportedGrammarError(f"llguidance option {option!r}", where, "not an option llguidance documents")
            if self.at("PUNCT", "="):
                self.i += 1
                value = self.value()
                takes = ("str", "re", "sym") if option == "suffix" else ("str",)
                if value is None or value[0] not in takes or option == "lazy":
                    raise UnsupportedGrammarError(f"llguidance option {option!r}", where, "a value it does not take")
                out[option] = value
            elif option in ("stop_capture", "suffix"):
                raise UnsupportedGrammarError(f"llguidance option {option!r}", where, "it needs a value")
            else:
                out[option] = True
            if not self.at("PUNCT", ","):
                break
            self.i += 1
        self.take("PUNCT", "]")
        return out

    def expansions(self) -> Expr:
        alternatives = [self.conjunction()]
        while self.at("PUNCT", "|") or self.at("NL_OR"):
            self.i += 1
            alternatives.append(self.conjunction())
        return ("alt", alternatives)

    def conjunction(self) -> Any:
        """llguidance's `a & b` (binds tighter than `|`): ("and", [seq, ...]) as a sequence."""
        seq = self.alias()
        if not self.at("PUNCT", "&"):
            return seq
        parts = [seq]
        while self.at("PUNCT", "&"):
            self.i += 1
            parts.append(self.alias())
        return [("and", parts)]

    def alias(self) -> Any:
        seq = self.expansion()
        if self.at("TO"):
            self.i += 1
            name = self.take("NAME")
            if not is_rule_name(name):
                raise Unread("an alias that is no rule name")
            return [("alias", seq, name)]
        return seq

    def expansion(self) -> list[Expr]:
        seq: list[Expr] = []
        while True:
            atom = self.atom()
            if atom is None:
                return seq
            seq.append(self.operators(atom))

    def operators(self, atom: Expr) -> Expr:
        kind, value = self.peek()
        if kind == "PUNCT" and value in "?*+":
            self.i += 1
            return ("rep", atom, 0 if value != "+" else 1, 1 if value == "?" else None)
        if kind == "PUNCT" and value == "~" and self.toks[self.i + 1][0] == "NUMBER":
            self.i += 1
            lo = int(self.take("NUMBER"))
            hi = lo
            if self.at("DOTDOT"):
                self.i += 1
                hi = int(self.take("NUMBER"))
            if lo < 0 or hi < lo:
                raise Unread("a bad range")
            return ("rep", atom, lo, hi)
        if kind == "PUNCT" and value == "{":  # (llguidance's x{n}, x{m,n}, x{m,}, x{,n})
            self.i += 1
            lo = int(self.take("NUMBER")) if self.at("NUMBER") else None
            hi: Optional[int] = lo
            if self.at("PUNCT", ","):
                self.i += 1
                hi = int(self.take("NUMBER")) if self.at("NUMBER") else None
            self.take("PUNCT", "}")
            lo = lo or 0
            if lo < 0 or (hi is not None and hi < max(lo, 1)):
                raise Unread("a bad range")
            if self.rule is not None and max(lo, hi or 0) > MAX_RULE_COUNT:  # (Lark's `~` would go to its loader)
                raise UnsupportedGrammarError(f"a count above {MAX_RULE_COUNT} in a rule", f"rule {self.rule}",
                                              "each count is a copy of the rule's text; count inside a terminal (no bound "
                                              "there) or nest counts, (x{16}){16}")
            return ("rep", atom, lo, hi)
        return atom

    def atom(self) -> Optional[Expr]:
        kind, value = self.peek()
        if kind == "PUNCT" and value == "~":  # (llguidance's not, tighter than `+`: ~a+ is (~a)+)
            self.i += 1
            inner = self.atom()
            if inner is None:
                raise Unread("~ before no value")
            return ("not", inner)
        if kind == "PUNCT" and value in "([":
            self.i += 1
            inner = self.expansions()
            self.take("PUNCT", ")" if value == "(" else "]")
            return inner if value == "(" else ("maybe", inner)
        return self.value()

    def value(self) -> Optional[Expr]:
        kind, value = self.peek()
        if kind == "NAME":
            self.i += 1
            if self.at("PUNCT", "{") and self.toks[self.i + 1][0] not in ("NUMBER", "PUNCT"):  # (not a count)
                if not is_rule_name(value):
                    raise Unread("a terminal used as a template")
                self.i += 1
                args = [self.template_arg()]
                while self.at("PUNCT", ","):
                    self.i += 1
                    args.append(self.template_arg())
                self.take("PUNCT", "}")
                return ("tmpl", value, args)
            return ("sym", value)
        if kind == "STRING":
            self.i += 1
            if self.at("DOTDOT"):
                self.i += 1
                return ("range", value, self.take("STRING"))
            return ("str", value)
        if kind == "REGEXP":
            self.i += 1
            return ("re", value)
        return None

    def template_arg(self) -> Expr:
        arg = self.value()
        if arg is None:
            raise Unread("a template argument that is no value")
        return arg
