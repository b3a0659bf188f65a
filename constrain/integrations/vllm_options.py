"""What a vLLM request asks constrain for: one grammar, read from `SamplingParams.extra_args`
(the logits-processor route) or from vLLM's own structured-output fields (the backend route).

Both routes end in a `GrammarSpec`, compiled by `compile_spec` with a Compiler for the model's
vocabulary. Nothing here imports vLLM.

Request options, under the key "constrain" of `extra_args` (a dict, or the same object as JSON
text: the OpenAI server's `vllm_xargs` only carries flat values), with exactly one grammar:

    {"json_schema": {...} or JSON text, "whitespace": "compact" | "flexible",
                    "property_order": "schema" | "any"}
    {"regex": "..."}
    {"lark": "...", "start": "start"}
    {"gbnf": "root ::= ..."}              GBNF (llama.cpp's and XGrammar's EBNF), read as Lark
    {"grammar": "sql"}                    a grammar shipped with constrain (constrain.grammars)
    {"choice": ["yes", "no"]}             exactly one of the strings
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ..compiled import CompiledGrammar
from ..compiler import Compiler
from ..errors import EngineOptionsError

EXTRA_ARGS_KEY = "constrain"
GRAMMAR_KINDS = ("json_schema", "regex", "lark", "gbnf", "grammar", "choice")
_OPTIONS = {
    "json_schema": {"whitespace": ("compact", "flexible"), "property_order": ("schema", "any")},
    "regex": {},
    "lark": {"start": None},
    "gbnf": {},
    "grammar": {"start": None},
    "choice": {},
}
_REGEX_SPECIAL = set("\\.^$|?*+()[]{}-/&~#\"' \t\n\r\f\v")


@dataclass(frozen=True)
class GrammarSpec:
    """One grammar to compile: `kind` (one of GRAMMAR_KINDS), its `source` (schema as JSON text,
    pattern, Lark or GBNF text, grammar name, or JSON list of choices) and its options."""

    kind: str
    source: str
    options: tuple[tuple[str, str], ...] = field(default=())

    def option(self, name: str, default: str) -> str:
        return dict(self.options).get(name, default)


def spec_from_extra_args(extra_args: Optional[Mapping[str, Any]]) -> Optional[GrammarSpec]:
    """The grammar a request's `extra_args` asks for, or None when it asks for none.

    Raises EngineOptionsError naming the problem (an unknown key, no grammar or two, wrong types)."""
    if not extra_args or EXTRA_ARGS_KEY not in extra_args:
        return None
    return parse_options(extra_args[EXTRA_ARGS_KEY])


def parse_options(value: Any) -> GrammarSpec:
    """A GrammarSpec from the value under extra_args["constrain"] (a dict or its JSON text)."""
    where = f'extra_args["{EXTRA_ARGS_KEY}"]'
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise EngineOptionsError(
                f"{where} is text but not JSON ({exc.msg} at offset {exc.pos}); pass a dict such as "
                '{"regex": "[0-9]+"} or its JSON text'
            ) from None
    if not isinstance(value, Mapping):
        raise EngineOptionsError(
            f"{where} must be a dict naming one grammar, e.g. {{\"regex\": \"[0-9]+\"}}; got {type(value).__name__}"
        )
    kinds = [k for k in GRAMMAR_KINDS if k in value]
    if len(kinds) != 1:
        found = f"{' and '.join(kinds)}" if kinds else "none"
        raise EngineOptionsError(
            f"{where} must name exactly one grammar ({', '.join(GRAMMAR_KINDS)}); found {found}"
        )
    kind = kinds[0]
    allowed = _OPTIONS[kind]
    unknown = sorted(str(k) for k in value if k != kind and k not in allowed)
    if unknown:
        known = ", ".join(allowed) or "none"
        raise EngineOptionsError(f"{where}: unknown option(s) {unknown} for {kind!r} (its options: {known})")
    options = []
    for name, choices in allowed.items():
        if name in value:
            setting = value[name]
            if not isinstance(setting, str) or (choices is not None and setting not in choices):
                expected = " or ".join(repr(c) for c in choices) if choices else "a string"
                raise EngineOptionsError(f"{where}[{name!r}] must be {expected}; got {setting!r}")
            options.append((name, setting))
    return GrammarSpec(kind, _source(kind, value[kind], where), tuple(options))


def _source(kind: str, value: Any, where: str) -> str:
    if kind == "json_schema":
        if isinstance(value, (dict, bool)):
            return json.dumps(value)
        if isinstance(value, str):
            return value
        raise EngineOptionsError(f"{where}['json_schema'] must be a schema dict or JSON text; got {type(value).__name__}")
    if kind == "choice":
        if not isinstance(value, (list, tuple)) or not value or not all(isinstance(c, str) for c in value):
            raise EngineOptionsError(f"{where}['choice'] must be a non-empty list of strings; got {value!r}")
        return json.dumps(list(value))
    if not isinstance(value, str):
        raise EngineOptionsError(f"{where}[{kind!r}] must be a string; got {type(value).__name__}")
    if kind == "grammar":
        from .. import grammars

        if value not in grammars.NAMES:
            raise EngineOptionsError(
                f"{where}['grammar']: no shipped grammar {value!r}; choose one of {', '.join(grammars.NAMES)} "
                "or pass your own Lark text as 'lark'"
            )
    return value


def choice_regex(choices: list[str]) -> str:
    """A regex matching exactly one of `choices` (each character literal)."""
    return "|".join("".join("\\" + ch if ch in _REGEX_SPECIAL else ch for ch in c) or "()" for c in choices)


def compile_spec(compiler: Compiler, spec: GrammarSpec) -> CompiledGrammar:
    """Compile `spec` with `compiler` (cached there: the same spec twice is one compile)."""
    if spec.kind == "json_schema":
        return compiler.compile_json_schema(
            spec.source,
            whitespace=spec.option("whitespace", "compact"),
            property_order=spec.option("property_order", "schema"),
        )
    if spec.kind == "regex":
        return compiler.compile_regex(spec.source)
    if spec.kind == "lark":
        return compiler.compile_lark(spec.source, spec.option("start", "start"))
    if spec.kind == "gbnf":
        from .gbnf import gbnf_to_lark

        return compiler.compile_lark(gbnf_to_lark(spec.source))
    if spec.kind == "grammar":
        from .. import grammars

        return compiler.compile_lark(grammars.load(spec.source), spec.option("start", "start"))
    if spec.kind == "choice":
        return compiler.compile_regex(choice_regex(json.loads(spec.source)))
    raise EngineOptionsError(f"unknown grammar kind {spec.kind!r}; expected one of {', '.join(GRAMMAR_KINDS)}")
