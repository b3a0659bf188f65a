"""A Lark grammar as rules for the stack matcher (automata/rules.py).

Our reader (reader.py; Lark's own loader for the rare forms it leaves to it) reads
the text: its syntax, `%import`, templates, `?`/`*`/`+`/`[...]`/`~ n..m`, aliases, `_rules` and
`?rules` all become plain rules over terminals; then:
- each terminal becomes an automaton (terminals.py): inlined where its end is forced, a greedy
  rule of its own where it could read on (the longest match); one that matches the empty text
  too (llguidance's reading) is optional where used;
- `%ignore` terminals may come after every terminal and at the start of the text, as Lark's
  lexer skips them between terminals (after, not before: the text between two terminals then
  belongs to the innermost rule that read the first, one stack, where "before" would leave one
  stack per rule that could start there);
- left recursion is rewritten as iteration (left_recursion.py), and rules that recursion does
  not need are inlined into their callers (inline.py: fewer stack frames per mask);
- priorities, aliases and tree shaping change which parse Lark builds, not which texts parse:
  they are read and have no effect.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Iterable, Mapping, Optional, Sequence

import numpy as np

from ...automata import ir
from ...automata.dfa import DFA
from ...errors import GrammarError, UnsupportedGrammarError
from ...limits import Limits
from ...vocab.special_bytes import virtual_bytes
from .dialect import Dialect, read_dialect
from .inline import inlined
from .json_embed import schema_rules
from .left_recursion import renamed, symbols, to_ir, without_left_recursion
from .reader import LoadedGrammar, read_grammar
from .regex_algebra import Algebra
from .syntax import Unread
from .terminals import Terminal, first_bytes, lower_terminal

MAYBE, SOME = "%maybe", "%some"  # (a terminal that may match nothing, as a rule: _maybe_rules)
TOP = "$start"  # the rule around the start rule (trailing ignored text); Lark names cannot hold "$"


@dataclass(frozen=True)
class LarkRules:
    """`rules` (name -> IR) for compile_rules, from `start`, with the `greedy` terminal rules
    and the bytes their ends refuse (`refused`, one bit each: end lookaheads, end_guard.py)."""

    rules: dict[str, ir.Node]
    start: str
    greedy: tuple[str, ...]
    refused: dict[str, int] = field(default_factory=dict)
    patterns: dict[str, str] = field(default_factory=dict)  # greedy rule -> its terminal's regex (return_confirm.py)
    # the ASCII characters some terminal matches alone; None where not known (%json, special tokens)
    singles: Optional[frozenset[int]] = None
    # greedy rule -> per state, what its end refuses whatever follows, where less than `refused` (end_window.py)
    surely: dict[str, tuple[int, ...]] = field(default_factory=dict)
    written: dict[str, ir.Node] = field(default_factory=dict)  # the rules before inlining (split_rules.py)


def lark_rules(
    text: str, start: str = "start", *, import_paths: Sequence[Path | str] = (), source: str = "<grammar>",
    limits: Optional[Limits] = None, special_tokens: Optional[Mapping[str, int]] = None, reader: bool = True,
    files: Optional[Mapping[str, str]] = None, kept: Collection[str] = (), outlined: Collection[str] = (),
) -> LarkRules:
    """`special_tokens`: the vocabulary's special tokens by text (`<|eot_id|>` -> id), for the
    special tokens a rule names (none: naming one is an error). `reader`: False reads the text
    with Lark's loader alone (tests compare the two). `files`: the imported grammar files' texts
    by path, read already (a cache key's): our reader imports those, not the files as they are now.
    `kept`: rules never inlined; `outlined`: rules whose terminals are calls of rules of their
    own (`NAME%use`): both where a rule's DFA would be too large otherwise (split_rules.py)."""
    limits = limits or Limits()
    loaded, dialect = _load(text, start, import_paths, source, reader, files)
    terminals = {name: lower_terminal(name, p, limits, name in loaded.shortest) for name, p in loaded.terminals.items()
                 if p is not None}
    for name, written in dialect.specials.items():
        terminals[name] = Terminal(name, _special_node(written, special_tokens or {}), False)
    embedded: dict[str, ir.Node] = {}
    for k, (name, schema) in enumerate(dialect.schemas.items()):
        schema_rule_set, schema_start = schema_rules(schema, k)
        embedded.update(schema_rule_set)
        terminals[name] = Terminal(name, ir.RuleRef(schema_start), False)
    bnf = loaded.rules
    is_terminal: dict[str, bool] = {}
    for origin, expansions in bnf.items():
        for expansion in expansions:
            for s in symbols(expansion):
                is_terminal[s] = s not in bnf
                if s not in bnf and s not in terminals:
                    raise UnsupportedGrammarError(
                        f"terminal {s} without a pattern (%declare)", f"rule {origin}",
                        "only a postlexer makes it (e.g. indentation tokens), which a grammar cannot express",
                    )
    # (an ignored terminal declared without a pattern never matches: only a postlexer makes it)
    ignore_names = [name for name in loaded.ignore if name in terminals]
    others = [terminals[name] for name, term in is_terminal.items() if term and name not in ignore_names]
    bnf = _maybe_rules(bnf, [t.name for t in others if t.optional and not t.only_empty], is_terminal)
    bnf, emptied = without_left_recursion(bnf, lambda name: is_terminal.get(name, False))
    ignored = [terminals[name] for name in ignore_names if not terminals[name].only_empty]
    plain = _plain_ignores(ignored, others)
    skip = ir.repeat(ir.alt(*[t.node if t.name in plain else _use(t) for t in ignored]), 0, None) if ignored else None
    used: set[str] = {name for name in ignore_names if name not in plain}

    uses: dict[str, ir.Node] = {}  # outlined terminals' rules

    def lower(symbol: str, outline: bool = False) -> ir.Node:
        if not is_terminal.get(symbol, False):
            return ir.RuleRef(symbol)
        some = symbol.endswith(SOME)
        terminal = terminals[symbol[: -len(SOME)] if some else symbol]
        if terminal.only_empty:
            return ir.EMPTY
        used.add(terminal.name)
        node = _use(terminal)
        node = node if skip is None else ir.concat(node, skip)
        if outline:
            uses[f"{symbol}%use"] = node
            node = ir.RuleRef(f"{symbol}%use")
        return ir.repeat(node, 0, 1) if terminal.optional and not some else node

    rules: dict[str, ir.Node] = {name: to_ir(exps, (lambda s: lower(s, True)) if name in outlined else lower)
                                 for name, exps in bnf.items()}
    rules.update(uses)
    body: ir.Node = ir.RuleRef(start)
    if start in emptied:  # (the start rule lost the empty text to left-recursion removal)
        body = ir.repeat(body, 0, 1)
    rules[TOP] = body if skip is None else ir.concat(skip, body)
    rule_terminals = [t for name in sorted(used) for t in (terminals[name].parts or (terminals[name],)) if t.greedy]
    for t in rule_terminals:  # (as the DFA lower_terminal built: the rule's is the same, ~0.5 ms for SQL's NAME)
        rules[t.name] = ir.Embedded(t.dfa)
    greedy = tuple(t.name for t in rule_terminals)
    refused = {t.name: t.refused for t in rule_terminals if t.refused}
    surely = {t.name: t.surely for t in rule_terminals if t.surely is not None}
    patterns = {t.name: loaded.terminals[name].to_regexp() for name in sorted(used)
                if loaded.terminals.get(name) is not None and not isinstance(loaded.terminals[name], Algebra)
                for t in (terminals[name].parts or (terminals[name],)) if t.greedy}
    singles = None if dialect.schemas or dialect.specials else _single_characters(terminals.values())
    rules.update(embedded)  # (a schema's rules keep their own shapes: never inlined)
    return LarkRules(inlined(rules, TOP, (*greedy, *embedded, *kept, *uses)), TOP, greedy, refused, patterns, singles,
                     surely, rules)


def _maybe_rules(bnf: dict[str, list[tuple]], optional: list[str], is_terminal: dict[str, bool]) -> dict[str, list[tuple]]:
    """`bnf` with each terminal that may match nothing (llguidance's reading: optional where used)
    as a rule `T%maybe: T%some | ` (`T%some`: its other texts), so that the left-recursion rewrite
    sees the rule that may be empty (`foo: /a*/ foo | "c"` is left recursion through it). The
    new names are entered in `is_terminal`."""
    if not optional:
        return bnf
    names = {t: t + MAYBE for t in optional}
    out = {origin: [renamed(e, names) for e in expansions] for origin, expansions in bnf.items()}
    for t, rule in names.items():
        out[rule] = [(t + SOME,), ()]
        is_terminal[rule], is_terminal[t + SOME] = False, True
    return out


def _single_characters(terminals: Iterable[Terminal]) -> Optional[frozenset[int]]:
    """The ASCII characters some terminal matches alone, from the DFAs lower_terminal built and
    the literals' IR (no regex compiled: SQL's 68 cost ~2 ms); None where a terminal's shape
    leaves it unknown."""
    out: set[int] = set()
    for terminal in terminals:
        for t in terminal.parts or (terminal,):
            node = t.node
            dfa = t.automaton if t.automaton is not None else node.dfa if isinstance(node, ir.Embedded) else None
            if dfa is not None:
                row = dfa.table[0, dfa.byte_classes[:128]]
                out.update(b for b in np.flatnonzero(row >= 0).tolist() if dfa.accepting[row[b]])
            elif isinstance(node, ir.Chars):
                out.update(b for lo, hi in node.ranges for b in range(lo, min(hi, 127) + 1))
            elif not (isinstance(node, ir.Concat) and all(isinstance(x, ir.Chars) for x in node.items)):
                return None  # (a word of several characters matches none alone)
    return frozenset(out)


def _plain_ignores(ignored: list[Terminal], others: list[Terminal]) -> set[str]:
    """The ignored terminals that can be inlined as a plain regex (no greedy call) between
    terminals: those whose end is forced, and runs of one byte set (`WS: /[ \t\n]+/`) that no
    other terminal starts with a byte of (then splitting a run changes nothing, and no run is
    cut short before a terminal). Most grammars ignore whitespace so: their masks then walk no
    whitespace frames. A comment that reads to the end of its line stays a greedy rule."""
    plain: set[str] = set()
    starts: dict[str, set[int]] = {}

    def start_of(u: Terminal) -> set[int]:
        if u.name not in starts:
            starts[u.name] = first_bytes(u)
        return starts[u.name]

    for t in ignored:
        if t.parts:  # (rules of its own: not plain)
            continue
        if not t.greedy:
            plain.add(t.name)
            continue
        dfa = t.dfa
        one_run = dfa.n_states == 2 and not dfa.accepting[0] and dfa.accepting[1] and (dfa.table[0] == dfa.table[1]).all()
        if one_run and not any(start_of(t) & start_of(u) for u in [*ignored, *others] if u is not t):
            plain.add(t.name)
    return plain


def _special_node(written: str, special_tokens: Mapping[str, int]) -> ir.Node:
    """A special token (`<|eot_id|>`, `<[128009]>`) as its virtual spelling's bytes; a list or
    range of ids (`<[128000-128255]>`) as the choice of theirs."""
    if not written.startswith("<["):
        found = special_tokens.get(written)
        if found is None:
            raise GrammarError(f"the vocabulary has no special token {written}")
        return ir.Embedded(byte_string_dfa(virtual_bytes(found)))
    def refused(named: str) -> UnsupportedGrammarError:
        return UnsupportedGrammarError(f"token {written}", "a rule", f"it names {named}; only special tokens can be "
                                       "named by id (write a normal token's text)")

    body = written[2:-2]
    if body[0] in "*^":  # (every token, or all but some)
        raise refused("normal tokens")
    special = set(special_tokens.values())
    ids: set[int] = set()
    for part in body.split(","):
        lo, _, hi = part.partition("-")
        for i in range(int(lo), int(hi or lo) + 1):  # (a long range stops at its first normal token)
            if i not in special:
                raise refused(f"id {i}, which is no special token")
            ids.add(i)
    return ir.alt(*[ir.Embedded(byte_string_dfa(virtual_bytes(i))) for i in sorted(ids)])


def byte_string_dfa(data: bytes) -> DFA:
    """The DFA of exactly these bytes (which need not be UTF-8)."""
    classes = np.zeros(256, dtype=np.int32)
    distinct = sorted(set(data))
    for k, b in enumerate(distinct, start=1):
        classes[b] = k
    table = np.full((len(data) + 1, len(distinct) + 1), -1, dtype=np.int32)
    for q, b in enumerate(data):
        table[q, classes[b]] = q + 1
    accepting = np.zeros(len(data) + 1, dtype=np.bool_)
    accepting[-1] = True
    return DFA(classes, table, accepting)


def _use(terminal: Terminal) -> ir.Node:
    """Where a grammar uses a terminal: a call of its greedy rule, or its text inline."""
    return ir.RuleRef(terminal.name) if terminal.greedy else terminal.node


def _load(text: str, start: str, import_paths: Sequence[Path | str], source: str, reader: bool = True,
          files: Optional[Mapping[str, str]] = None) -> tuple[LoadedGrammar, Dialect]:
    """The grammar's rules, terminals and ignored terminals, by our own reader (reader.py) where
    it takes the text (grammar files imported too), else by Lark's loader (anything the reader
    leaves to Lark; its errors become GrammarError with Lark's message, line and column)."""
    if not isinstance(text, str):
        raise TypeError(f"a Lark grammar is text (str), got {type(text).__name__}")
    dialect = read_dialect(text)  # (options: only an empty %llguidance header passes)
    if reader:
        try:
            return read_grammar(dialect.text, start, [str(p) for p in import_paths], source, files), dialect
        except (Unread, RecursionError):  # (Lark's loader then says what it makes of the text)
            pass
    return _load_with_lark(dialect.text, start, import_paths, source, files), dialect


class _ReadAlready:
    """An import path for Lark's loader that serves the files read already (a cache key's
    texts): Lark calls it with (base path, file name) and goes on to the next path on OSError."""

    def __init__(self, folder: str, files: Mapping[str, str]) -> None:
        self.folder = folder
        self.files = files

    def __call__(self, base_path: Any, grammar_path: str) -> tuple[str, str]:
        file = os.path.join(self.folder, grammar_path)
        if file not in self.files:
            raise OSError(f"{file} was not read for this grammar")
        return file, self.files[file]


def _load_with_lark(text: str, start: str, import_paths: Sequence[Path | str], source: str,
                    files: Optional[Mapping[str, str]] = None) -> LoadedGrammar:
    try:
        from lark.exceptions import LarkError
        from lark.load_grammar import load_grammar
    except ImportError as exc:  # pragma: no cover - lark is a dependency
        raise GrammarError("Lark grammars need the `lark` package (pip install lark)") from exc
    try:
        paths: list[Any] = [str(p) for p in import_paths]
        if files is not None:  # (a relative import's folder, which Lark adds itself, is read as it is now)
            paths = [_ReadAlready(p, files) for p in paths]
        grammar, _ = load_grammar(text, source, paths, False)
        if start not in {d[0] for d in grammar.rule_defs}:
            raise GrammarError(f"the grammar has no rule {start!r} to start from (pass start=...)")
        term_defs, rule_defs, ignore_names = grammar.compile([start], set())
    except LarkError as exc:
        raise GrammarError(f"Lark grammar {source}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:  # (an %import found nowhere, or not UTF-8)
        raise GrammarError(f"Lark grammar {source}: cannot read an imported grammar: {exc}") from None
    except RecursionError:
        raise GrammarError(f"Lark grammar {source}: nested too deeply to load") from None
    except GrammarError:
        raise
    except Exception as exc:  # (Lark's loader fails on some malformed texts: an assert, a bad format string)
        raise GrammarError(f"Lark grammar {source}: Lark's loader fails on it ({type(exc).__name__}: {exc})") from None
    rules: dict[str, list[tuple[str, ...]]] = {}
    for rule in rule_defs:
        rules.setdefault(rule.origin.name, []).append(tuple(s.name for s in rule.expansion))
    return LoadedGrammar({t.name: t.pattern for t in term_defs}, rules, list(ignore_names))
