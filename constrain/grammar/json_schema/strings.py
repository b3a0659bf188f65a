"""Strings: lengths, patterns, formats, excluded values; and the key language of propertyNames.

Unconstrained strings accept every JSON spelling (escapes included). Lengths and patterns
multiply spellings, so constrained strings are spelled canonically (what json.dumps writes with
ensure_ascii=False): narrower in spelling, never in the set of string values allowed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ...automata import DFA, compile_ir, ir, parse_regex
from ...automata.algebra import difference, intersect
from ...errors import ConstrainError, EmptyLanguageError
from . import lexical
from .formats import FORMATS
from .keywords import NOT_ENUM, NOT_FORMATS, NOT_PATTERNS, PATTERNS, count_keyword
from .patterns import pattern_dfa
from .validation import unenforced_format_note

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator


def string_node(tr: "Translator", schema: dict, pointer: str) -> ir.Node:
    """The quoted JSON strings valid under the string keywords of `schema`."""
    lo = count_keyword(schema, "minLength", pointer, 0)
    hi = count_keyword(schema, "maxLength", pointer, None)
    if hi is not None and hi < lo:
        return ir.NOTHING
    patterns = ([schema["pattern"]] if "pattern" in schema else []) + list(schema.get(PATTERNS, []))
    fmt = schema.get("format")
    formats = []
    if fmt is not None:
        if fmt in FORMATS:
            formats.append(fmt)
        elif isinstance(fmt, str):
            tr.annotations.append(unenforced_format_note(fmt, pointer))
    if formats and hi is not None and hi > LONG and not patterns:
        longest = max(_longest_bytes(_format_dfa(f)) for f in formats)
        if longest <= hi:  # (a string's bytes bound its characters)
            hi = None  # the format's strings are shorter anyway
        else:
            # A long length bound on an unbounded format (uri, maxLength 65536): their product
            # exceeds the automaton limits (65,537 counts times the format's states). Formats
            # are annotations unless a validator opts in; this one is reported as not enforced.
            tr.annotations += [
                unenforced_format_note(f, pointer) + f" (with maxLength {hi} its automaton is too large)" for f in formats
            ]
            formats = []
    not_patterns = list(schema.get(NOT_PATTERNS, []))
    not_formats = [f for f in schema.get(NOT_FORMATS, []) if f in FORMATS]
    excluded = [v for v in schema.get(NOT_ENUM, []) if isinstance(v, str)]
    if not (patterns or formats or not_patterns or not_formats) and hi is None and lo == 0:
        node: ir.Node = lexical.any_string()  # every spelling: one small loop
    elif not (patterns or formats or not_patterns or not_formats) and hi is not None and hi > LONG and lo < BLOCK:
        node = lexical.quoted(_long_body(tr, lo, hi))
    else:
        try:
            node = _constrained(lo, hi, patterns, formats, not_patterns, not_formats, pointer)
        except EmptyLanguageError:
            return ir.NOTHING  # no string satisfies all of them
    if excluded:
        return _excluding(node, tuple(excluded))
    return node


@lru_cache(maxsize=1024)
def _excluding(node: ir.Node, excluded: tuple[str, ...]) -> ir.Node:
    """The strings of `node` but `excluded`: remembered, since the complement of an enum
    recurs in every branch of an exact oneOf (and across schemas)."""
    try:
        return ir.Embedded(difference(compile_ir(node), compile_ir(ir.alt(*(lexical.string_literal(v) for v in excluded)))))
    except EmptyLanguageError:
        return ir.NOTHING


def _longest_bytes(dfa: DFA) -> float:
    """The longest accepted byte string (inf when the language is infinite)."""
    table = dfa.table
    n = dfa.n_states
    live = np.zeros(n, dtype=bool)
    live[np.nonzero(dfa.accepting)[0]] = True
    changed = True
    while changed:  # states from which acceptance is reachable
        reach = live | ((table >= 0) & live[np.maximum(table, 0)]).any(axis=1)
        changed = bool((reach != live).any())
        live = reach
    memo: dict[int, float] = {}
    on_path: set[int] = set()

    def longest(q: int) -> float:
        if q in memo:
            return memo[q]
        if q in on_path:
            return float("inf")
        on_path.add(q)
        best = 0.0 if dfa.accepting[q] else -float("inf")
        for t in set(table[q].tolist()):
            if t >= 0 and live[t]:
                best = max(best, 1 + longest(t))
        on_path.discard(q)
        memo[q] = best
        return best

    return longest(0)


def _constrained(lo: int, hi: Optional[int], patterns: list, formats: list, not_patterns: list, not_formats: list, pointer: str) -> ir.Node:
    """The quoted canonical spellings of the strings with lo..hi characters that match
    `patterns` and `formats` and none of `not_patterns` and `not_formats`. One node per
    process for each: the same few (a date-time, a length bound, a common pattern) recur
    across schemas, and each costs several automaton products, and then a rule DFA (rule DFAs
    are shared by equal IR)."""
    key = (lo, hi, tuple(patterns), tuple(formats), tuple(not_patterns), tuple(not_formats))
    try:
        return _cached_constrained(key)
    except EmptyLanguageError:
        raise
    except (TypeError, ConstrainError):  # unhashable (malformed) or failing: say where
        return lexical.quoted(ir.Embedded(_build_body_dfa(key, pointer)))


@lru_cache(maxsize=1024)
def _cached_constrained(key: tuple) -> ir.Node:
    return lexical.quoted(ir.Embedded(_build_body_dfa(key, "#")))


def _build_body_dfa(key: tuple, pointer: str) -> DFA:
    lo, hi, patterns, formats, not_patterns, not_formats = key
    parts = [lambda p=p: pattern_dfa(p, f"{pointer}/pattern", _canonical) for p in patterns]
    parts += [lambda f=f: _format_dfa(f) for f in formats]
    if lo == 0 and hi is None and parts:
        # A pattern's or format's canonical spellings are canonical string bodies already:
        # the product with "any body" would give the same minimal DFA back.
        dfa = parts.pop(0)()
    else:
        dfa = compile_ir(lexical.string_body(lo, hi, canonical=True))
    for part in parts:
        dfa = intersect(dfa, part())
    for p in not_patterns:
        excluded_dfa = _or_none(pattern_dfa, p, f"{pointer}/not/pattern", _canonical)
        if excluded_dfa is not None:  # (a pattern that matches nothing excludes nothing)
            dfa = difference(dfa, excluded_dfa)
    for f in not_formats:
        dfa = difference(dfa, _format_dfa(f))
    return dfa


LONG = 512  # longer length bounds are counted in blocks through the stack
BLOCK = 256


def _long_body(tr: "Translator", lo: int, hi: int) -> ir.Node:
    """Strings of lo..hi characters (lo < BLOCK <= hi) without a DFA of hi states: k whole
    blocks of BLOCK characters (a rule called k times) and a shorter rest. A length n is
    k = n // BLOCK blocks and n % BLOCK more; the parts below say which rest each k allows."""
    def chars(a: int, b: int) -> ir.RuleRef:
        return tr.shared_rule(("chars", a, b), lambda: lexical.string_body(a, b, canonical=True))

    q, r = divmod(hi, BLOCK)
    block = chars(BLOCK, BLOCK)
    parts = [chars(lo, BLOCK - 1)]  # k = 0
    if q >= 2:  # 1 <= k <= q - 1: any rest
        parts.append(ir.concat(ir.repeat(block, 1, q - 1), chars(0, BLOCK - 1)))
    parts.append(ir.concat(ir.repeat(block, q, q), chars(0, r)))  # k = q: up to r more
    return ir.alt(*parts)


def _or_none(make, *args) -> Optional[DFA]:
    try:
        return make(*args)
    except EmptyLanguageError:
        return None


def _canonical(node: ir.Node) -> ir.Node:
    return lexical.encode(node, canonical=True)


@lru_cache(maxsize=64)
def _format_dfa(fmt: str) -> DFA:
    return compile_ir(lexical.encode(parse_regex(FORMATS[fmt]), canonical=True))


def key_language(tr: "Translator", schema: Any, pointer: str) -> Optional[DFA]:
    """The quoted spellings of the object keys `propertyNames` allows (None: no key at all)."""
    from .dnf import alternatives

    parts: list[ir.Node] = []
    for alt in alternatives(schema, pointer, tr):
        if alt is True:
            parts.append(lexical.any_string())
            continue
        if "const" in alt or "enum" in alt:
            values = [alt["const"]] if "const" in alt else list(alt["enum"])
            parts += [lexical.string_literal(v) for v in values if isinstance(v, str) and tr.valid_value(v, alt)]
            continue
        types = alt.get("type", "string")
        if "string" in ([types] if isinstance(types, str) else types):
            parts.append(string_node(tr, alt, pointer))
    try:
        return compile_ir(ir.alt(*parts)) if parts else None
    except EmptyLanguageError:
        return None


def canonical_key(key: str) -> bytes:
    """A property name as the grammar writes it (canonical JSON string)."""
    import json

    return json.dumps(key, ensure_ascii=False).encode("utf-8", "surrogatepass")
