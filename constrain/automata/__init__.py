"""Regex → byte-level DFA (UTF-8 aware), with explicit limits."""

from __future__ import annotations

import time

from ..limits import Limits
from .dfa import DEAD, DFA, determinize
from .ir import Node
from .nfa import build_nfa
from .assertions import regex_language
from .regex_parser import parse_regex


def compile_ir(node: Node, limits: Limits = Limits()) -> DFA:
    deadline = time.perf_counter() + limits.max_compile_seconds
    return determinize(build_nfa(node, limits.max_nfa_states), limits, deadline)


def regex_to_dfa(pattern: str, limits: Limits = Limits()) -> DFA:
    """Compile a regex (matched as a whole, like re.fullmatch) to a minimal byte DFA."""
    return compile_ir(regex_language(pattern, search=False, limits=limits), limits)


__all__ = ["DEAD", "DFA", "Limits", "compile_ir", "parse_regex", "regex_language", "regex_to_dfa"]
