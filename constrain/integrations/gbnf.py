"""GBNF (the EBNF dialect of llama.cpp and XGrammar) read into constrain's Lark dialect.

Why: SGLang's `ebnf` requests and llama.cpp users write `root ::= ...` grammars; constrain
compiles Lark. The translation keeps the language character for character: every GBNF string
becomes a Lark literal and every character class (and `.`) a one-character regex terminal, so
no Lark terminal can end anywhere but where the GBNF element ends (docs/lark.md: a terminal
of fixed length leaves nothing to the lexer), and there is no implicit whitespace in either.

Supported: rules `name ::= ...` (`root` is the start; a rule may span lines, it ends where the
next `name ::=` begins), alternatives `|`, grouping `( )`, strings `"..."` with the escapes
`\\n \\r \\t \\\\ \\" \\' \\[ \\] \\xHH \\uHHHH \\UHHHHHHHH`, classes `[a-z]` and `[^...]`, `.` (any
character), `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`, `{,n}`, and `#` comments. XGrammar's
extensions (lookahead assertions `(= ...)`, `TagDispatch`, macros) raise GrammarError naming
the construct and its line and column.
"""

from __future__ import annotations

import re

from ..errors import GrammarError
from .gbnf_parse import RULE_START, ANY_CHAR, Alt, CharClass, Expr, Lit, Parser, Ref, Repeat, strip_comments, where


def looks_like_gbnf(text: str) -> bool:
    """True when `text` defines rules with `::=` (GBNF) rather than `:` (Lark)."""
    return RULE_START.search(strip_comments(text)) is not None


def gbnf_to_lark(text: str, root: str = "root") -> str:
    """The Lark text of the GBNF grammar `text`, whose start rule is `root` (Lark's `start`).
    Raises GrammarError (with line and column) for syntax errors, unknown rules and the
    XGrammar extensions constrain does not read."""
    rules = Parser(text).parse()
    if root not in rules:
        names = ", ".join(sorted(rules)) or "none"
        raise GrammarError(f"GBNF grammar has no rule {root!r} to start from (rules: {names}); "
                           f"name the start rule {root!r}")
    names = _lark_names(list(rules), root)
    for name, (expr, pos) in rules.items():
        for ref, ref_pos in _refs(expr):
            if ref not in rules:
                raise GrammarError(f"GBNF rule {name!r} refers to undefined rule {ref!r} at "
                                   f"{where(text, ref_pos)}; define it with `{ref} ::= ...`")
    lines = [f"{names[name]}: {_emit(expr, names)}" for name, (expr, _) in rules.items()]
    return "\n".join(lines) + "\n"


# -- Lark text -------------------------------------------------------------------------------------
def _lark_names(names: list[str], root: str) -> dict[str, str]:
    """GBNF names (any case, `-` and `.` allowed) → unique lowercase Lark rule names."""
    out: dict[str, str] = {}
    used = {"start"}
    for name in names:
        if name == root:
            out[name] = "start"
            continue
        base = "g_" + re.sub(r"[^a-z0-9_]", "_", name.lower())
        candidate, k = base, 2
        while candidate in used:
            candidate, k = f"{base}_{k}", k + 1
        used.add(candidate)
        out[name] = candidate
    return out


def _refs(expr: Expr) -> list[tuple[str, int]]:
    if isinstance(expr, Ref):
        return [(expr.name, expr.pos)]
    if isinstance(expr, Repeat):
        return _refs(expr.item)
    if isinstance(expr, Alt):
        return [r for option in expr.options for item in option for r in _refs(item)]
    return []


def _emit(expr: Expr, names: dict[str, str]) -> str:
    if isinstance(expr, Lit):
        return _literal(expr.text)
    if isinstance(expr, CharClass):
        return _class(expr)
    if isinstance(expr, Ref):
        return names[expr.name]
    if isinstance(expr, Alt):
        return " | ".join(" ".join(_atom(i, names) for i in option) for option in expr.options)
    return _repeat(expr, names)


def _atom(expr: Expr, names: dict[str, str]) -> str:
    """`expr` as one Lark item (parenthesized unless it already is one)."""
    text = _emit(expr, names)
    if isinstance(expr, Alt):
        return f"({text})"
    return text


def _repeat(expr: Repeat, names: dict[str, str]) -> str:
    item = _atom(expr.item, names)
    if isinstance(expr.item, Repeat):
        item = f"({item})"
    low, high = expr.low, expr.high
    if high is None:
        if low == 0:
            return f"{item}*"
        if low == 1:
            return f"{item}+"
        return f"({item} ~ {low}) {item}*"
    if high == 0:
        return "()"  # {0} and {0,0}: the empty text
    if (low, high) == (0, 1):
        return f"{item}?"
    if low == 0:
        return f"({item} ~ 1..{high})?"
    if low == high:
        return f"{item} ~ {low}"
    return f"{item} ~ {low}..{high}"


def _literal(text: str) -> str:
    if not text:
        return "()"
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _class(cls: CharClass) -> str:
    parts = []
    for low, high in cls.ranges:
        parts.append(_class_char(low) if low == high else f"{_class_char(low)}-{_class_char(high)}")
    if cls.negated and not parts:
        return r"/[\s\S]/"  # [^] : any character
    if cls is ANY_CHAR:
        return r"/[\s\S]/"
    return "/[" + ("^" if cls.negated else "") + "".join(parts) + "]/"


def _class_char(code: int) -> str:
    ch = chr(code)
    if ch in "\\]^-[/":
        return "\\" + ch
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if 0xD800 <= code <= 0xDFFF or code > 0xFFFF:
        return f"\\U{code:08x}" if code > 0xFFFF else f"\\u{code:04x}"
    if code > 0x7E:
        return f"\\u{code:04x}"
    return ch
