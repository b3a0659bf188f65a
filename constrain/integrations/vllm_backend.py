"""vLLM's structured-output route: constrain as a grammar backend next to xgrammar and guidance.

    from constrain.integrations.vllm_backend import register
    register()     # vLLM also runs it in each of its processes, via the vllm.general_plugins entry point
    llm = LLM(model, structured_outputs_config={"backend": "constrain"})
    llm.generate(prompt, SamplingParams(structured_outputs=StructuredOutputsParams(json=schema)))

This route takes vLLM's own request fields (json, json_object, regex, choice, and grammar as
Lark text or as GBNF, the EBNF xgrammar reads) and serves what custom logits processors cannot: speculative decoding (vLLM refuses custom
logits processors when a speculative config is set), where the scheduler validates drafted
tokens, advances over them to fill one mask per position, and rolls back.

An honest note: vLLM chooses grammar backends from a fixed list, so `register()` patches it, in
three places and for the backend name "constrain" only: it adds "constrain" to the names
`StructuredOutputsConfig.backend` accepts, checks such requests in
`SamplingParams._validate_structured_outputs` (compiling them against a byte vocabulary, so a
broken grammar is a client error), and makes `StructuredOutputManager.grammar_init` build a
`ConstrainBackend`. Other backends run vLLM's code untouched. The patch is written against
vLLM 0.32 and checks that the places it wraps exist.
"""

from __future__ import annotations

import json
import logging
import typing
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import EngineOptionsError
from ..kernels.bitmask import allocate_token_bitmask
from ..matcher import Matcher
from .gbnf import looks_like_gbnf
from .vllm_compilers import check_spec, compiler_for, vocabulary_for
from .vllm_options import GrammarSpec, compile_spec

try:  # subclass vLLM's base classes when vLLM is installed
    from vllm.v1.structured_output.backend_types import StructuredOutputBackend as _BackendBase
    from vllm.v1.structured_output.backend_types import StructuredOutputGrammar as _GrammarBase
except ImportError:  # vLLM is optional: the classes still work on their own
    _BackendBase = object  # type: ignore[assignment,misc]
    _GrammarBase = object  # type: ignore[assignment,misc]

logger = logging.getLogger(__name__)

BACKEND_NAME = "constrain"


def spec_from_structured_output(request_type: Any, grammar_spec: str) -> GrammarSpec:
    """The grammar for vLLM's (StructuredOutputOptions, spec) key. `request_type` is the enum
    member or its name (JSON, JSON_OBJECT, REGEX, CHOICE, GRAMMAR, STRUCTURAL_TAG)."""
    kind = getattr(request_type, "name", str(request_type))
    if kind == "JSON":
        return GrammarSpec("json_schema", grammar_spec)
    if kind == "JSON_OBJECT":
        return GrammarSpec("json_schema", '{"type": "object"}')
    if kind == "REGEX":
        return GrammarSpec("regex", grammar_spec)
    if kind == "CHOICE":
        choices = json.loads(grammar_spec) if grammar_spec.lstrip().startswith("[") else [grammar_spec]
        return GrammarSpec("choice", json.dumps(choices))
    if kind == "GRAMMAR":
        return GrammarSpec("gbnf" if looks_like_gbnf(grammar_spec) else "lark", grammar_spec)
    raise EngineOptionsError(
        f"the constrain backend does not serve {kind.lower()} requests; use json, json_object, "
        "regex, choice or a grammar in Lark or GBNF (or another backend for structural tags)"
    )


class ConstrainGrammar(_GrammarBase):  # type: ignore[misc,valid-type]
    """One request's grammar state, as vLLM's scheduler drives it (accept after each step,
    validate / advance / roll back over speculative drafts, fill one bitmask row per position)."""

    def __init__(self, matcher: Matcher) -> None:
        self.matcher = matcher
        self.num_processed_tokens = 0

    def accept_tokens(self, request_id: str, tokens: list[int]) -> bool:
        """Advance over `tokens`; False if one is rejected (vLLM then ends the request with an
        error). Tokens after the grammar's end (its EOS) are ignored."""
        matcher = self.matcher
        for token in tokens:
            if matcher.is_terminated():
                return True
            if not matcher.accept_token(token):
                logger.error("constrain: request %s: token %d is not allowed by its grammar here", request_id, token)
                return False
            self.num_processed_tokens += 1
        return True

    def validate_tokens(self, tokens: list[int]) -> list[int]:
        """The longest prefix of `tokens` the grammar accepts from here, through its EOS at most;
        the state does not move."""
        if self.matcher.is_terminated():
            return []
        count = self.matcher.validate_tokens(tokens)
        eos = self.matcher.compiled.vocab.eos_token_ids
        for i in range(count):
            if tokens[i] in eos:
                return list(tokens[: i + 1])
        return list(tokens[:count])

    def rollback(self, num_tokens: int) -> None:
        self.matcher.rollback(num_tokens)
        self.num_processed_tokens -= num_tokens

    def fill_bitmask(self, bitmask: Any, batch_index: int) -> None:
        self.matcher.fill_next_token_bitmask(bitmask, batch_index)

    def is_terminated(self) -> bool:
        return self.matcher.is_terminated()

    def reset(self) -> None:
        self.matcher.reset()
        self.num_processed_tokens = 0


@dataclass
class ConstrainBackend(_BackendBase):  # type: ignore[misc,valid-type]
    """Engine-level backend: compiles each request's grammar for the model's tokenizer, with the
    request's stop ids as the grammar's EOS ids (what vLLM ends a request on)."""

    vllm_config: Any
    tokenizer: Any
    vocab_size: int

    def __post_init__(self) -> None:
        self._vocab = vocabulary_for(self.tokenizer, self.vocab_size)

    def compile_grammar(
        self, request_type: Any, grammar_spec: str, stop_token_ids: Optional[set[int]] = None
    ) -> ConstrainGrammar:
        compiler = compiler_for(self._vocab, stop_token_ids)
        grammar = compile_spec(compiler, spec_from_structured_output(request_type, grammar_spec))
        return ConstrainGrammar(Matcher(grammar))

    def allocate_token_bitmask(self, max_num_seqs: int) -> Any:
        return allocate_token_bitmask(max_num_seqs, self.vocab_size)

    def destroy(self) -> None:
        """Nothing to free: compilers are shared per process (cached per tokenizer)."""


# -- the patch of vLLM's backend table --------------------------------------------------------
_registered = False


def register() -> None:
    """Make "constrain" a structured-output backend name in this process (idempotent).

    vLLM calls this in each of its processes through the `vllm.general_plugins` entry point
    (`plugin`, which only warns where this vLLM's layout does not match);
    call it yourself before `LLM(..., structured_outputs_config={"backend": "constrain"})`,
    since LLM checks that config before it loads plugins."""
    global _registered
    if _registered:
        return
    from vllm import sampling_params
    from vllm.config import structured_outputs as so_config
    from vllm.v1.structured_output import StructuredOutputManager

    for owner, name in (
        (sampling_params.SamplingParams, "_validate_structured_outputs"),
        (StructuredOutputManager, "grammar_init"),
        (so_config.StructuredOutputsConfig, "__dataclass_fields__"),
    ):
        if not hasattr(owner, name):
            raise RuntimeError(
                f"constrain's vLLM backend patch expects {owner.__qualname__}.{name} (vLLM 0.32); this vLLM "
                "has another layout: use the logits-processor route (constrain.integrations.vllm_logits_processor)"
            )
    _add_backend_name(so_config)
    _wrap_validation(sampling_params.SamplingParams)
    _wrap_grammar_init(StructuredOutputManager)
    _registered = True


def plugin() -> None:
    """The `vllm.general_plugins` entry point: `register()`, but a vLLM of another layout gets
    a warning instead of an error (vLLM runs every installed plugin, and one that raises stops
    the engine from starting even when nobody asked for this backend)."""
    try:
        register()
    except Exception as exc:  # noqa: BLE001
        logger.warning("constrain: the vLLM backend is not available: %s", exc)


def _add_backend_name(so_config: Any) -> None:
    """Let StructuredOutputsConfig.backend (a pydantic Literal) take "constrain"."""
    import pydantic.dataclasses

    names = typing.get_args(so_config.StructuredOutputsBackend)
    if BACKEND_NAME in names:
        return
    widened = typing.Literal[names + (BACKEND_NAME,)]  # type: ignore[valid-type]
    cls = so_config.StructuredOutputsConfig
    so_config.StructuredOutputsBackend = widened
    cls.__annotations__["backend"] = widened
    cls.__dataclass_fields__["backend"].type = widened
    pydantic.dataclasses.rebuild_dataclass(cls, force=True)


def _wrap_validation(params_cls: Any) -> None:
    original = params_cls._validate_structured_outputs

    def _validate_structured_outputs(self: Any, model_config: Any, structured_outputs_config: Any, tokenizer: Any) -> None:
        if structured_outputs_config is None or structured_outputs_config.backend != BACKEND_NAME:
            return original(self, model_config, structured_outputs_config, tokenizer)
        _validate_for_constrain(self)

    _validate_structured_outputs.__wrapped__ = original  # type: ignore[attr-defined]
    params_cls._validate_structured_outputs = _validate_structured_outputs


def _validate_for_constrain(params: Any) -> None:
    """vLLM's request checks for the constrain backend: one backend per engine, a supported
    kind, and a grammar that compiles (against a byte vocabulary)."""
    from vllm.exceptions import VLLMValidationError
    from vllm.v1.structured_output.request import get_structured_output_key

    so = params.structured_outputs
    if so is None:
        return
    if so._backend not in (None, BACKEND_NAME):
        raise VLLMValidationError(
            f"request-level structured output backend selection is not supported: the request names "
            f"{so._backend!r}, the engine runs {BACKEND_NAME!r}; drop '_backend' from the request"
        )
    so._backend = BACKEND_NAME
    if isinstance(so.choice, list) and not so.choice:
        raise VLLMValidationError("structured_outputs.choice cannot be an empty list")
    for name in ("grammar", "json"):
        value = getattr(so, name)
        if isinstance(value, str) and not value.strip():
            raise VLLMValidationError(f"structured_outputs.{name} cannot be an empty string")
    try:
        check_spec(spec_from_structured_output(*get_structured_output_key(so)))
    except Exception as exc:  # noqa: BLE001 - grammar, schema, regex and option errors alike
        raise VLLMValidationError(f"constrain cannot serve this request: {exc}") from exc


def _wrap_grammar_init(manager_cls: Any) -> None:
    original = manager_cls.grammar_init

    def grammar_init(self: Any, request: Any) -> None:
        so_request = request.structured_output_request
        if self.backend is None and so_request is not None:
            params = request.sampling_params.structured_outputs if request.sampling_params else None
            if params is not None and params._backend == BACKEND_NAME:
                self.backend = ConstrainBackend(
                    self.vllm_config,
                    tokenizer=self.tokenizer,
                    vocab_size=self.vllm_config.model_config.get_vocab_size(),
                )
        return original(self, request)

    grammar_init.__wrapped__ = original  # type: ignore[attr-defined]
    manager_cls.grammar_init = grammar_init
