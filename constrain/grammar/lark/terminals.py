"""A Lark terminal's match as an automaton.

Lark's Earley parser (its default, with the dynamic lexer) matches each terminal where the
parser expects it with Python's `re.match`, so a terminal's text is what that match takes:
- With a lazy quantifier (`.*?`, as in common.lark's ESCAPED_STRING and C_COMMENT) the match
  is the shortest: the terminal's strings are those of the regex with no proper prefix in it
  (its DFA with every accepting state's transitions cut), and it ends where it first can. Parts
  after the last lazy one that may match nothing (`"..."i?`, a regex's flags) keep their own
  longest match (lazy_tail.py).
- Otherwise the match is the longest (greedy quantifiers): the terminal ends only before a byte
  it cannot read. Where an accepting state can read on, the terminal is a *greedy rule* of its
  own (see automata/stack_semantics.py); where none can (literals, `"..."` strings), the ending
  is forced and the terminal is inlined into the rules that use it.
- A lookahead of one character that ends a branch (`EQ: /=(?!=)/`, `CALL: /[a-z]+(?=[(])/`)
  looks past the terminal, as in Lark: what it refuses may not follow the end (end_guard.py),
  so the terminal is a greedy rule whose return refuses those bytes (and, for a positive one,
  the end of the text).
- A terminal that matches the empty text (`""`, `/a*/`), which Lark refuses and llguidance
  reads, is its other texts, left out where a rule may skip it (`optional`).
Where re's backtracking order differs from both (an alternation whose first branch is a prefix
of a later one, `a|ab`), we take the longest; docs/lark.md lists the differences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ...automata import compile_ir, ir
from ...automata.algebra import difference
from ...automata.assertions import regex_automaton
from ...automata.charset import case_fold, lead_bytes, normalize
from ...automata.dfa import DFA, minimize
from ...automata.end_window import reach_past_end, windowed_ends
from ...automata.nfa import nfa_states
from ...errors import EmptyLanguageError, GrammarError, UnsupportedGrammarError, UnsupportedRegexError
from ...limits import Limits
from .end_guard import end_guards
from .lazy_tail import lazy_head_and_tail
from .regex_algebra import Algebra, dfa_of


@dataclass(frozen=True)
class Terminal:
    """`node`: the terminal's strings; `greedy`: it must be a rule of its own that returns
    only before a byte it cannot read, nor one of `refused` (one bit each: its end lookahead,
    end_guard.py; or one such int per state of its DFA: end_window.py). A terminal whose
    branches refuse different bytes may be an alternation of `parts`, its node their uses
    (rule calls of the greedy ones)."""

    name: str
    node: ir.Node
    greedy: bool
    automaton: Optional[DFA] = None  # the node's minimal DFA, where the node is not one already
    refused: "int | tuple[int, ...]" = 0
    parts: tuple["Terminal", ...] = ()
    surely: Optional[tuple[int, ...]] = None  # per state, what an end refuses whatever follows (None: all it refuses)
    # it matches the empty text too (llguidance reads such terminals, Lark refuses them): `node`
    # is the rest of its language, and where a rule uses the terminal it may be left out
    optional: bool = False

    @property
    def only_empty(self) -> bool:
        """Does it match the empty text alone (`""`)? Then a use of it is nothing."""
        return self.optional and self.node == ir.EMPTY

    @property
    def dfa(self) -> DFA:
        if self.automaton is not None:
            return self.automaton
        if isinstance(self.node, ir.Embedded):
            return self.node.dfa  # type: ignore[return-value]
        from ...automata import compile_ir as build

        return build(self.node)


def first_bytes(terminal: Terminal) -> set[int]:
    """The bytes a terminal's text can start with: from its IR where it has one (a literal's
    first characters; building 55 DFAs only for this took ~5 ms of SQL's compile), else from
    its DFA."""
    if terminal.automaton is None and not isinstance(terminal.node, ir.Embedded):
        chars = _first_chars(terminal.node)
        if chars is not None:
            return set(lead_bytes(normalize(chars)))
    dfa = terminal.dfa
    return set(np.flatnonzero(dfa.table[0, dfa.byte_classes] >= 0).tolist())


def _first_chars(node: ir.Node) -> Optional[list[tuple[int, int]]]:
    """The code points a text of `node` can start with (None: not plain IR)."""
    if isinstance(node, ir.Chars):
        return list(node.ranges)
    if isinstance(node, ir.Alt):
        out: list[tuple[int, int]] = []
        for item in node.items:
            part = _first_chars(item)
            if part is None:
                return None
            out.extend(part)
        return out
    if isinstance(node, ir.Repeat):
        return [] if node.max == 0 else _first_chars(node.item)
    if isinstance(node, ir.Concat):
        out = []
        for item in node.items:
            part, empty = _first_chars(item), _nullable(item)
            if part is None or empty is None:
                return None
            out.extend(part)
            if not empty:
                break
        return out
    return None


def _nullable(node: ir.Node) -> Optional[bool]:
    if isinstance(node, ir.Chars):
        return False
    if isinstance(node, ir.Repeat):
        return node.min == 0 or node.max == 0 or _nullable(node.item)
    if isinstance(node, (ir.Concat, ir.Alt)):
        parts = [_nullable(item) for item in node.items]
        if None in parts:
            return None
        return all(parts) if isinstance(node, ir.Concat) else any(parts)
    return None


def lower_terminal(name: str, pattern: Any, limits: Limits, shortest: bool = False) -> Terminal:
    """Lark's TerminalDef pattern (PatternStr or PatternRE) as a Terminal; `shortest`: it takes
    its shortest match whatever its quantifiers (llguidance's `[lazy]` rules: one lexeme)."""
    if shortest or isinstance(pattern, Algebra):  # (the DFA alone: no regex text to read on)
        if isinstance(pattern, Algebra):
            dfa = _algebra_dfa(name, pattern, limits)
        else:
            dfa = _regex_automaton(name, pattern.to_regexp(), limits)[1]
        optional = bool(dfa.accepting[0])  # (the rest, optional where used, as llguidance reads it)
        rest = _without_empty_text(dfa, limits) if optional else dfa
        if rest is None:
            return _nothing(name)
        if shortest:  # (`[lazy]: /a*/` is `a` or nothing)
            rest = shortest_matches(rest)
        return Terminal(name, ir.Embedded(rest), bool((rest.table[rest.accepting] >= 0).any()), optional=optional)
    if type(pattern).__name__ == "PatternStr" and set(pattern.flags) <= {"i"}:
        if not pattern.value:  # ("": nothing, as llguidance reads it)
            return _nothing(name)
        if not pattern.flags:
            return Terminal(name, ir.literal(pattern.value), False)
        # ("select"i: each character with its case partners, as the regex (?i:select) reads;
        # SQL's forty keywords parsed as regexes cost a Lark compile more than their rules do)
        return Terminal(name, ir.concat(*(ir.Chars(case_fold(((ord(c), ord(c)),))) for c in pattern.value)), False)
    regex = pattern.to_regexp()
    if _MAY_LOOK_AHEAD.search(regex) and not _is_lazy(regex):
        guarded = _end_refusing(name, regex, limits)
        if guarded is not None:
            return guarded
    language, dfa = _regex_automaton(name, regex, limits)
    optional = bool(dfa.accepting[0])
    if optional:  # (as llguidance reads it: the terminal less the empty text, left out where used)
        if _is_lazy(regex):  # (its shortest match is always the empty text)
            _refuse_empty(name, regex, dfa)
        rest = _without_empty_text(dfa, limits)
        if rest is None:
            return _nothing(name)
        language, dfa = None, rest
    if _is_lazy(regex):
        split = lazy_head_and_tail(regex, _is_lazy, _widths)
        if split is None:
            dfa = shortest_matches(dfa)
        else:  # (the head's shortest match, then the tail's longest: lazy_tail.py)
            head, tail = (_regex_automaton(name, part, limits)[1] for part in split)
            dfa = compile_ir(ir.concat(ir.Embedded(shortest_matches(head)), ir.Embedded(tail)), limits)
        return Terminal(name, ir.Embedded(dfa), bool((dfa.table[dfa.accepting] >= 0).any()))
    # Where used, the smaller of the regex's own IR and its DFA: rules inline terminals in many
    # places, and copying a DFA into every use costs more than a few characters (`"select"i`).
    continues = bool((dfa.table[dfa.accepting] >= 0).any())
    if language is not None and nfa_states(language) <= 2 * dfa.n_states + 16:
        return Terminal(name, language, continues, dfa)
    return Terminal(name, ir.Embedded(dfa), continues, optional=optional)


def _nothing(name: str) -> Terminal:
    """A terminal that matches the empty text alone: a use of it is nothing (`only_empty`)."""
    return Terminal(name, ir.EMPTY, False, optional=True)


_EMPTY_TEXT = DFA(np.zeros(256, dtype=np.int32), np.full((1, 1), -1, dtype=np.int32), np.ones(1, dtype=np.bool_))


def _without_empty_text(dfa: DFA, limits: Limits) -> Optional[DFA]:
    """The DFA's language less the empty text; None where nothing else is left."""
    try:
        return difference(dfa, _EMPTY_TEXT, limits)
    except EmptyLanguageError:
        return None


_MAY_LOOK_AHEAD = re.compile(r"\(\?[!=]|\\[bB]|\$")  # (a lookahead, a word boundary, an end anchor)


def _end_refusing(name: str, regex: str, limits: Limits) -> Optional[Terminal]:
    """The terminal whose assertions read the text after its match (its end lookaheads, `\\b`
    or `$` at its end...): a greedy rule whose ends refuse bytes next; None where they read
    nothing past it, or too far (end_window.py)."""
    groups = None
    if "(?!" in regex or "(?=" in regex:
        groups = end_guards(regex, _widths, lambda part: _ascii_members(name, part, limits))
    exact = groups is not None and all(_reach("(?u)" + part) == 0 for part, _ in groups)
    guarded = _guarded(name, regex, groups, limits) if exact else None  # (the quick way)
    if guarded is not None:
        return guarded
    try:
        found = windowed_ends("(?u)" + regex, limits)
    except UnsupportedRegexError as exc:
        raise UnsupportedGrammarError("a regex construct", f"terminal {name}", str(exc)) from None
    except GrammarError as exc:
        raise GrammarError(f"terminal {name}: {exc}") from None
    if found is not None:
        dfa, refused, surely = found
        _refuse_empty(name, regex, dfa)
        return Terminal(name, ir.Embedded(dfa), True, refused=refused, surely=None if surely == refused else surely)
    # (assertions that read further or without bound: the end lookaheads end_guard.py reads
    # are still enforced; the others read within the terminal's own text)
    return _guarded(name, regex, groups, limits) if groups is not None and not exact else None


def _reach(regex: str) -> Optional[int]:
    try:
        return reach_past_end(regex)
    except GrammarError:
        return None


def _guarded(name: str, regex: str, groups: list[tuple[str, int]], limits: Limits) -> Optional[Terminal]:
    """The terminal whose branches' ends refuse bytes (end_guard.py): one greedy rule where all
    refuse the same, else an alternation of one part per group; None where two groups can start
    with the same byte (their ends would not be the whole regex's longest match)."""
    if len(groups) == 1:
        whole = _regex_automaton(name, groups[0][0], limits)[1]
        _refuse_empty(name, regex, whole)
        return Terminal(name, ir.Embedded(whole), True, refused=groups[0][1])
    parts = []
    for k, (part_regex, refused) in enumerate(groups):
        dfa = _regex_automaton(name, part_regex, limits)[1]
        greedy = bool(refused) or bool((dfa.table[dfa.accepting] >= 0).any())
        parts.append(Terminal(f"{name}#{k}", ir.Embedded(dfa), greedy, refused=refused))
    starts = [first_bytes(part) for part in parts]
    if any(a & b for k, a in enumerate(starts) for b in starts[k + 1 :]):
        return None  # (before the union's DFA: the caller goes on to end_window.py)
    whole = _regex_automaton(name, "|".join(f"(?:{part})" for part, _ in groups), limits)[1]
    _refuse_empty(name, regex, whole)
    uses = [ir.RuleRef(part.name) if part.greedy else part.node for part in parts]
    return Terminal(name, ir.alt(*uses), False, whole, parts=tuple(parts))


def _refuse_empty(name: str, regex: str, dfa: DFA) -> None:
    """A terminal that matches the empty text is read as optional (lower_terminal) except where
    it is lazy (its shortest match is always empty) or has assertions at its end."""
    if dfa.accepting[0]:
        raise UnsupportedGrammarError(
            "a terminal matching the empty string", f"terminal {name}",
            f"/{regex}/ matches zero characters (read as optional only without lazy quantifiers or lookarounds)",
        )


def _algebra_dfa(name: str, pattern: Algebra, limits: Limits) -> DFA:
    try:
        return dfa_of(pattern, lambda regex: _regex_automaton(name, regex, limits)[1], limits)
    except EmptyLanguageError:
        raise GrammarError(f"terminal {name}: its & and ~ leave no text at all") from None


def _ascii_members(name: str, regex: str, limits: Limits) -> Optional[int]:
    """The ASCII characters a one-character regex matches, one bit each (None: not read)."""
    try:
        dfa = _regex_automaton(name, regex, limits)[1]
    except GrammarError:
        return None
    after = dfa.table[0, dfa.byte_classes[:128]]
    hits = [b for b in range(128) if after[b] >= 0 and dfa.accepting[after[b]]]
    return sum(1 << b for b in hits)


def _regex_automaton(name: str, regex: str, limits: Limits) -> tuple[Optional[ir.Node], DFA]:
    """(the regex's IR, None where it has assertions; its minimal DFA), errors naming the terminal."""
    try:  # ((?u): \d \w \s as Python's re reads them in Lark, Unicode; regex_escapes.py)
        found = regex_automaton("(?u)" + regex, limits)
        if isinstance(found, DFA):  # (assertions: the exact automaton, already built)
            return None, found if found.minimal else minimize(found.byte_classes, found.table, found.accepting)
        return found, compile_ir(found, limits)
    except UnsupportedRegexError as exc:
        raise UnsupportedGrammarError("a regex construct", f"terminal {name}", str(exc)) from None
    except GrammarError as exc:
        raise GrammarError(f"terminal {name}: {exc}") from None


def _widths(regex: str) -> Optional[tuple[int, int]]:
    """The fewest and most characters the regex matches (Python's parser; None where it does not
    parse)."""
    parser = _re_parser()[1]
    try:
        return tuple(parser.parse(regex).getwidth())  # type: ignore[return-value]
    except (re.error, OverflowError):
        return None


def _re_parser():
    try:
        from re import _constants as constants, _parser as parser  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_constants as constants  # type: ignore[no-redef]
        import sre_parse as parser  # type: ignore[no-redef]
    return constants, parser


def shortest_matches(dfa: DFA) -> DFA:
    """The strings of `dfa` none of whose proper prefixes it accepts."""
    table = np.array(dfa.table)
    table[dfa.accepting] = -1
    return minimize(dfa.byte_classes, table, dfa.accepting)


_MAYBE_LAZY = re.compile(r"[*+?}]\?")  # (also `\*?`, a literal star made optional: then the parser says)


def _is_lazy(regex: str) -> bool:
    """Does the regex hold a lazy quantifier (`*?`, `+?`, `??`, `{m,n}?`)? Read with Python's
    own parser: the same one Lark's matches use (only where a quantifier is followed by `?`
    at all: most regexes are not, and parsing them costs more than lowering some)."""
    if not _MAYBE_LAZY.search(regex):
        return False
    constants, parser = _re_parser()
    try:
        tree = parser.parse(regex)
    except re.error:
        return False
    return _has(tree, constants.MIN_REPEAT)


def _has(items: Any, opcode: Any) -> bool:
    for op, av in items:
        if op is opcode and av[0] != av[1]:  # (a lazy count that is fixed, `{3}?`, is no choice)
            return True
        for part in av if isinstance(av, (tuple, list)) else ():
            if hasattr(part, "data") and _has(part, opcode):  # a SubPattern
                return True
            if isinstance(part, list) and any(hasattr(p, "data") and _has(p, opcode) for p in part):
                return True
    return False
