"""A Lark grammar's rule set, with rules split where one DFA would be too large.

Inlining (inline.py) copies small rules into their callers, and each rule is one DFA over
bytes, `%ignore` woven between its terminals. Where ignored text overlaps the terminals around
it (`%ignore /[,b]/` beside `/b[ab]/` and `"b"`) the subset construction tracks every way of
cutting the bytes, and copies of such a rule side by side (`r1 "," r1{,3}`) multiply its states
past max_dfa_states, on a grammar of two lines that llguidance compiles (its lexer is apart from
its parser). So where a rule's DFA meets that limit, it is split and built again: first the rules
inlined into it keep frames of their own, then its terminals become calls of rules of their own
(one frame per terminal, as a lexer's token). Each step adds frames, which masks walk through,
so only the rules that need it are split; a rule whose terminal alone is too large still raises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional, Sequence

from ...automata.rule_facts import callees
from ...automata.rules import NEAR_START_NFA_STATES, RuleSet, compile_rules
from ...errors import LimitExceededError
from ...limits import Limits
from .return_confirm import regex_confirm
from .translate import lark_rules

SPLIT_ON = ("DFA size (states)",)  # (not the compile time: a retry would wait as long again, each time)
MAX_SPLITS = 8  # builds again at most this many times (each failed one met the limit: ~1 s at 100,000 states)


def lark_rule_set(
    text: str, start: str, limits: Limits, *, import_paths: Sequence[Path | str] = (),
    special_tokens: Optional[Mapping[str, int]] = None, files: Optional[Mapping[str, str]] = None,
) -> RuleSet:
    """The compiled rules of Lark grammar `text` (translate.lark_rules), the rules near the start
    built; rules split where their DFAs meet a limit (see above)."""
    kept: set[str] = set()
    outlined: set[str] = set()
    splits = 0
    while True:
        lowered = lark_rules(text, start, import_paths=import_paths, limits=limits, special_tokens=special_tokens,
                             files=files, kept=kept, outlined=outlined)
        try:
            rule_set = compile_rules(lowered.rules, lowered.start, limits, lowered.greedy, lowered.refused,
                                     return_checks=True,
                                     confirm=regex_confirm(lowered.patterns, lowered.singles, lowered.surely))
            rule_set.build_near_start(NEAR_START_NFA_STATES)
            return rule_set
        except LimitExceededError as exc:
            rule = exc.rule
            if exc.what not in SPLIT_ON or rule is None or rule not in lowered.written or splits == MAX_SPLITS:
                raise
            inlined = set(callees(lowered.written[rule])) - set(callees(lowered.rules[rule])) - kept
            if inlined:
                kept |= inlined
            elif rule not in outlined and not rule.endswith("%use"):
                outlined.add(rule)
            else:
                raise
            splits += 1
