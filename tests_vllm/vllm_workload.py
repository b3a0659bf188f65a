"""The batch the vLLM integration test and benchmark send: 8 chat requests to SmolLM2, six under
grammars (two JSON schemas, two regexes, two Lark grammars) and two unconstrained, each
expressible on every route (constrain's logits processor, constrain's backend, vLLM's xgrammar).

The grammars are bounded (string lengths, integer ranges, repetition counts), so a request ends
on its own well inside MAX_TOKENS and every constrained output must be a whole document; the
validators are independent of constrain: jsonschema, re.fullmatch, Lark's Earley parser.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

FQCN = "constrain.integrations.vllm_logits_processor:ConstrainLogitsProcessor"
MAX_TOKENS = 64

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
CITY = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 24},
        "country": {"type": "string", "maxLength": 24},
        "population": {"type": "integer", "minimum": 0, "maximum": 50000000},
    },
    "required": ["city", "country", "population"],
    "additionalProperties": False,
}
SQL = """start: "SELECT " cols " FROM " NAME where?
cols: "*" | NAME (", " NAME)~0..3
where: " WHERE " NAME " = " VALUE
NAME: /[a-z_]{1,16}/
VALUE: /[0-9]{1,6}/ | /'[a-z ]{0,16}'/
"""
ARITHMETIC = """start: term ((" + " | " - ") term)~0..3
term: NUMBER | "(" NUMBER (" * " NUMBER)~0..2 ")"
NUMBER: /[0-9]{1,4}/
"""


@dataclass(frozen=True)
class Row:
    """One request: its prompt, its grammar (None: unconstrained) and its sampling."""

    name: str
    question: str
    kind: Optional[str] = None  # json_schema, regex, lark
    grammar: Any = None
    temperature: float = 0.0
    seed: Optional[int] = None


ROWS = (
    Row("json_person", "Describe Ada Lovelace as JSON with her name and age.", "json_schema", PERSON),
    Row("json_city", "Give the largest city of Japan as JSON with city, country and population.", "json_schema", CITY,
        temperature=0.8, seed=7),
    Row("regex_date", "When did Apollo 11 land on the Moon? Answer with a date.", "regex", r"[0-9]{4}-[0-9]{2}-[0-9]{2}"),
    Row("regex_email", "Write an email address for Ada at example.com.", "regex", r"[a-z]{1,12}(\.[a-z]{1,12})?@example\.com",
        temperature=0.8, seed=11),
    Row("lark_sql", "Write a SQL query listing the names of all users.", "lark", SQL),
    Row("lark_arithmetic", "Write an arithmetic expression that equals 12.", "lark", ARITHMETIC),
    Row("free_colors", "Name three colors."),
    Row("free_capital", "What is the capital of France?", temperature=0.8, seed=3),
)


def model_dir() -> str:
    """SmolLM2 as safetensors, where scripts/test_vllm.sh converts it: $CONSTRAIN_VLLM_MODEL
    (the script sets it), else ~/.cache/constrain/vllm/smollm2."""
    default = Path.home() / ".cache" / "constrain" / "vllm" / "smollm2"
    return os.environ.get("CONSTRAIN_VLLM_MODEL", str(default))


def engine_kwargs(**overrides: Any) -> dict[str, Any]:
    """LLM(...) settings that work on a 2-core CPU box: fp32, eager, a small KV cache (the
    cache size itself comes from VLLM_CPU_KVCACHE_SPACE, in GiB)."""
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    kwargs = dict(model=model_dir(), dtype="float32", max_model_len=1024, max_num_seqs=8,
                  enforce_eager=True, seed=0)
    kwargs.update(overrides)
    return kwargs


def chat_prompts(llm: Any, rows=ROWS) -> list[str]:
    tokenizer = llm.get_tokenizer()
    return [tokenizer.apply_chat_template([{"role": "user", "content": r.question}], add_generation_prompt=True, tokenize=False)
            for r in rows]


def sampling(row: Row, route: str) -> Any:
    """The SamplingParams of `row` on `route`: "processor" (extra_args), "backend" (vLLM's
    structured_outputs fields, served by whichever backend the engine runs), or "free" (none)."""
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    kwargs: dict[str, Any] = dict(max_tokens=MAX_TOKENS, temperature=row.temperature, seed=row.seed)
    if row.kind is None or route == "free":
        return SamplingParams(**kwargs)
    if route == "processor":
        return SamplingParams(extra_args={"constrain": {row.kind: row.grammar}}, **kwargs)
    field = {"json_schema": "json", "regex": "regex", "lark": "grammar"}[row.kind]
    return SamplingParams(structured_outputs=StructuredOutputsParams(**{field: row.grammar}), **kwargs)


def check_output(row: Row, text: str) -> Optional[str]:
    """None if `text` is a valid document of the row's grammar (or the row has none), else why not."""
    if row.kind is None:
        return None
    try:
        if row.kind == "json_schema":
            import jsonschema

            jsonschema.validate(json.loads(text), row.grammar)
        elif row.kind == "regex":
            if re.fullmatch(row.grammar, text) is None:
                return f"{text!r} does not fully match {row.grammar!r}"
        else:
            import lark

            lark.Lark(row.grammar, parser="earley").parse(text)
    except Exception as exc:  # noqa: BLE001 - the reason goes into the assertion message
        return f"{text!r}: {type(exc).__name__}: {exc}"
    return None


def shutdown(llm: Any) -> None:
    """Stop the engine's processes now (before the next engine starts)."""
    import gc

    core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    if core is not None and hasattr(core, "shutdown"):
        core.shutdown()
    del llm
    gc.collect()
