"""An SGLang grammar backend: constrain's Matcher behind SGLang's BaseGrammarObject interface.

SGLang's scheduler talks to a grammar backend through two objects (sglang.srt.constrained.
base_grammar_backend): a *backend* that turns a request's key — ("json", schema), ("regex",
pattern), ("ebnf", grammar) or ("structural_tag", ...) — into a grammar object, compiled on its
thread pool and cached by key; and one *grammar object* per request, which the scheduler drives
each step: allocate_vocab_mask → fill_vocab_mask(mask, row) for every row of the batch →
move_vocab_mask → apply_vocab_mask(logits, mask) → accept_token(sampled). Speculative decoding
walks draft trees with accept_token / fill_vocab_mask / rollback(1); jump-forward asks
try_jump_forward → jump_forward_str_state, retokenizes the text, and hands the new ids to
jump_and_retokenize. A cached object is copy()'d (a fresh matcher) for each new request.

This module implements both with the same method names and semantics, over Matcher and the
bitmask kernels. SGLang is not a dependency: when it imports, the classes subclass its base
classes (so `register()` can plug the backend in), otherwise small local bases stand in.
Compile failures return SGLang's INVALID_GRAMMAR_OBJ (the scheduler aborts the request with an
error) and are logged; an unknown key type raises ValueError, as SGLang's own dispatch does.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Optional, Sequence

from ..compiled import CompiledGrammar
from ..compiler import Compiler
from ..errors import ConstrainError, TokenRejectedError
from ..kernels.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from ..matcher import Matcher
from ..vocab import Vocabulary
from .gbnf import gbnf_to_lark, looks_like_gbnf

logger = logging.getLogger(__name__)

KEY_TYPES = ("json", "regex", "ebnf", "structural_tag")
ANY_JSON = "$$ANY$$"  # SGLang's json key for "any JSON document" (response_format json_object)


class _LocalGrammarBase:
    """What SGLang's BaseGrammarObject provides, for when SGLang is not installed."""

    def __init__(self) -> None:
        self._finished = False
        self.grammar_stats: Any = None
        self.current_token: Optional[int] = None

    @property
    def finished(self) -> bool:
        return self._finished

    @finished.setter
    def finished(self, value: bool) -> None:
        self._finished = value

    def maybe_init_reasoning(self, reasoning: bool) -> None:
        """SGLang's hook for reasoning models; a plain grammar has no reasoning phase."""

    def recycle(self) -> None:
        """SGLang's hook to return pooled resources; a Matcher holds none."""

    def copy(self) -> Any:
        return self


class _LocalBackendBase:
    """What SGLang's BaseGrammarBackend provides: a compile pool and a cache by key."""

    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor()
        self.cache: dict[tuple[str, str], Any] = {}

    def dispatch_fallback(self, key_type: str, key_string: str) -> Any:
        raise ValueError(f"Invalid key_type: {key_type}={key_string}")

    def _init_value_dispatch(self, key: tuple[str, str], require_reasoning: bool = False) -> Any:
        key_type, key_string = key
        method = getattr(self, f"dispatch_{key_type}", None) if key_type in KEY_TYPES else None
        if method is None:
            return self.dispatch_fallback(key_type, key_string)
        return method(key_string)

    def get_cached_or_future_value(self, key: tuple[str, str], require_reasoning: bool = False) -> tuple[Any, bool]:
        value = self.cache.get(key)
        if value:
            return value.copy(), True
        return self.executor.submit(self._init_value_dispatch, key, require_reasoning), False

    def set_cache(self, key: tuple[str, str], value: Any) -> None:
        self.cache[key] = value

    def reset(self) -> None:
        self.cache.clear()


try:  # subclass SGLang's bases when it is there (the scheduler checks nothing else)
    from sglang.srt.constrained.base_grammar_backend import (  # type: ignore[import-not-found]
        INVALID_GRAMMAR_OBJ,
        BaseGrammarBackend as _BackendBase,
        BaseGrammarObject as _GrammarBase,
    )

    HAVE_SGLANG = True
except ImportError:
    _GrammarBase, _BackendBase = _LocalGrammarBase, _LocalBackendBase  # type: ignore[misc,assignment]
    INVALID_GRAMMAR_OBJ = _LocalGrammarBase()  # the sentinel a failed compile returns
    HAVE_SGLANG = False


class ConstrainGrammar(_GrammarBase):  # type: ignore[misc,valid-type]
    """One request's grammar state, driven by SGLang's scheduler (see the module docstring).

    `accepted_tokens` are the ids accepted so far: jump_and_retokenize diffs the retokenized ids
    against them, so output ids SGLang appended without accepting (jump-forward suffix ids) do
    not throw the count off."""

    def __init__(self, matcher: Matcher, key: Optional[tuple[str, str]] = None, *, jump_forward_min_bytes: int = 1) -> None:
        super().__init__()
        self._finished = False
        self.grammar_stats = None
        self.current_token = None
        self.matcher = matcher
        self.key = key
        self.accepted_tokens: list[int] = []
        self.jump_forward_min_bytes = max(1, int(jump_forward_min_bytes))

    @property
    def compiled(self) -> CompiledGrammar:
        return self.matcher.compiled

    # -- advancing ----------------------------------------------------------------------------
    def accept_token(self, token: int) -> None:
        """Advance by `token`. After EOS this is a no-op (SGLang may feed the step's token of an
        ended request); a token the grammar refuses raises TokenRejectedError (a ValueError:
        SGLang aborts that request)."""
        if self.matcher.is_terminated():
            return
        tid = int(token)
        self.current_token = tid
        if not self.matcher.accept_token(tid):
            raise self._rejected(tid)
        self.accepted_tokens.append(tid)

    def rollback(self, k: int) -> None:
        """Undo the last `k` accepted tokens (speculative decoding's rejected drafts)."""
        self.matcher.rollback(k)
        if k:
            del self.accepted_tokens[-k:]

    def is_terminated(self) -> bool:
        return self.matcher.is_terminated()

    # -- masks --------------------------------------------------------------------------------
    def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any = None) -> Any:
        """A (batch_size, ceil(vocab_size/32)) int32 CPU tensor, all allowed: rows of requests
        without a grammar stay unmasked. Filled on the CPU, then moved with move_vocab_mask."""
        return allocate_token_bitmask(batch_size, max(int(vocab_size), self.compiled.vocab.logits_width))

    def fill_vocab_mask(self, vocab_mask: Any, idx: int) -> None:
        self.matcher.fill_next_token_bitmask(vocab_mask, idx)

    @staticmethod
    def move_vocab_mask(vocab_mask: Any, device: Any) -> Any:
        return vocab_mask.to(device, non_blocking=True)

    @staticmethod
    def apply_vocab_mask(logits: Any, vocab_mask: Any) -> None:
        """-inf where row i of `vocab_mask` forbids, for every row i of `logits` (in place;
        Triton on CUDA, numba on CPU)."""
        apply_token_bitmask_inplace(logits, vocab_mask)

    # -- copies -------------------------------------------------------------------------------
    def copy(self) -> "ConstrainGrammar":
        """A fresh grammar object at the start (SGLang copies the cached object for each new
        request, as XGrammar's backend does). For one at the current position, use fork()."""
        return ConstrainGrammar(Matcher(self.compiled), self.key, jump_forward_min_bytes=self.jump_forward_min_bytes)

    def fork(self) -> "ConstrainGrammar":
        """An independent grammar object at the current position (same accepted tokens)."""
        other = ConstrainGrammar(self.matcher.fork(), self.key, jump_forward_min_bytes=self.jump_forward_min_bytes)
        other.accepted_tokens = list(self.accepted_tokens)
        return other

    # -- jump-forward -------------------------------------------------------------------------
    def try_jump_forward(self, tokenizer: Any = None) -> Optional[tuple[list[int], str]]:
        """(suffix_ids, text) when the grammar forces what comes next, else None.

        text: the forced bytes as a str, cut at the last whole character. If the output so far
        ends inside a character, the forced bytes start with its missing continuation bytes;
        those become `suffix_ids` (one single-byte token each), which SGLang appends to the
        output and decodes before `text`, so the character comes out whole. None where the
        vocabulary has no such token or less than `jump_forward_min_bytes` is forced."""
        if self.matcher.is_terminated():
            return None
        forced = self.matcher.forced_bytes()
        lead = 0
        while lead < min(3, len(forced)) and 0x80 <= forced[lead] < 0xC0:
            lead += 1
        vocab = self.compiled.vocab
        suffix_ids: list[int] = []
        for byte in forced[:lead]:
            tid = vocab.token_id(bytes([byte]))
            if tid is None or tid in vocab.special_ids:
                return None
            suffix_ids.append(tid)
        text = _whole_characters(forced[lead:])
        if len(text.encode("utf-8")) < self.jump_forward_min_bytes:
            return None
        return suffix_ids, text

    def jump_forward_str_state(self, helper: tuple[list[int], str]) -> tuple[str, int]:
        """(the forced text, -1): the state is the matcher's own, so none is handed around."""
        return helper[1], -1

    def jump_and_retokenize(self, old_output_ids: Sequence[int], new_output_ids: Sequence[int], next_state: int) -> None:
        """Make the accepted tokens `new_output_ids` (SGLang retokenized the output with the
        jumped text appended): roll back to the longest common prefix with the accepted tokens,
        accept the rest. If the grammar refuses one of the new ids, the state is restored and
        TokenRejectedError raised."""
        new = [int(t) for t in new_output_ids]
        old = self.accepted_tokens
        k = 0
        for a, b in zip(old, new):
            if a != b:
                break
            k += 1
        undone = old[k:]
        self.rollback(len(undone))
        for i, tid in enumerate(new[k:]):
            if not self.matcher.accept_token(tid):
                error = self._rejected(tid)
                self.rollback(i)
                for t in undone:
                    self.matcher.accept_token(t)
                self.accepted_tokens.extend(undone)
                raise error
            self.accepted_tokens.append(tid)

    # -- helpers ------------------------------------------------------------------------------
    def _rejected(self, tid: int) -> TokenRejectedError:
        vocab = self.compiled.vocab
        spelled = vocab.token_bytes[tid] if 0 <= tid < vocab.size else b"?"
        tail = vocab.decode(self.accepted_tokens[-8:]) if self.accepted_tokens else b""
        return TokenRejectedError(
            f"token {tid} ({spelled!r}) is not allowed by the {self.compiled.kind} grammar after "
            f"{len(self.accepted_tokens)} accepted tokens (output ends {tail!r}); the engine must "
            "apply fill_vocab_mask's mask before sampling",
            tid,
            len(self.accepted_tokens),
        )

    def __bool__(self) -> bool:  # SGLang tests `if grammar` on batch rows
        return True

    def __repr__(self) -> str:
        return f"ConstrainGrammar(key={self.key!r}, accepted={len(self.accepted_tokens)}, terminated={self.is_terminated()})"


class ConstrainGrammarBackend(_BackendBase):  # type: ignore[misc,valid-type]
    """SGLang's grammar backend over constrain: one per model (tokenizer and logits width).

    tokenizer: what SGLang passes (a transformers tokenizer), or anything
    Vocabulary.from_pretrained reads; or give `compiler` (a Compiler for the model's vocabulary).
    vocab_size: the model's logits width. eos_token_ids: the model's stop ids (SGLang passes
    them; they replace the tokenizer's, as in XGrammar's backend).
    any_whitespace: JSON may have whitespace between tokens (SGLang's default; off with
    --constrained-json-disable-any-whitespace). json_strict: unsupported JSON Schema keywords
    make the request invalid (True) or are relaxed and logged (False).
    `errors` maps each key whose compile failed to the reason."""

    def __init__(
        self,
        tokenizer: Any = None,
        vocab_size: Optional[int] = None,
        *,
        eos_token_ids: Optional[Iterable[int]] = None,
        compiler: Optional[Compiler] = None,
        any_whitespace: bool = True,
        json_strict: bool = True,
        jump_forward_min_bytes: int = 1,
        cache_dir: Optional[str] = None,
    ) -> None:
        super().__init__()
        if compiler is None:
            if tokenizer is None:
                raise TypeError("ConstrainGrammarBackend needs a tokenizer (or compiler=Compiler(vocab))")
            eos = None if eos_token_ids is None else sorted({int(t) for t in _as_ids(eos_token_ids)})
            vocab = Vocabulary.from_pretrained(tokenizer, logits_width=vocab_size, eos_token_ids=eos or None)
            compiler = Compiler(vocab, cache_dir=cache_dir)
        elif not isinstance(compiler, Compiler):
            raise TypeError(f"compiler must be a constrain.Compiler, got {type(compiler).__name__}")
        self.compiler = compiler
        self.vocab_size = max(int(vocab_size or 0), compiler.vocab.logits_width)
        self.whitespace = "flexible" if any_whitespace else "compact"
        self.json_strict = json_strict
        self.jump_forward_min_bytes = jump_forward_min_bytes
        self.errors: dict[tuple[str, str], str] = {}

    # -- SGLang's dispatch --------------------------------------------------------------------
    def dispatch_json(self, key_string: str) -> Any:
        def build() -> CompiledGrammar:
            schema: Any = {} if key_string == ANY_JSON else key_string
            grammar = self.compiler.compile_json_schema(schema, whitespace=self.whitespace, strict=self.json_strict)
            if grammar.relaxations:
                logger.warning("constrain: JSON schema compiled with relaxations: %s", "; ".join(map(str, grammar.relaxations)))
            return grammar

        return self._grammar("json", key_string, build)

    def dispatch_regex(self, key_string: str) -> Any:
        return self._grammar("regex", key_string, lambda: self.compiler.compile_regex(key_string))

    def dispatch_ebnf(self, key_string: str) -> Any:
        """A Lark grammar (constrain's dialect, start rule `start`), or a GBNF one (`root ::= ...`,
        SGLang's and XGrammar's EBNF), translated to Lark first."""

        def build() -> CompiledGrammar:
            text = gbnf_to_lark(key_string) if looks_like_gbnf(key_string) else key_string
            return self.compiler.compile_lark(text)

        return self._grammar("ebnf", key_string, build)

    def dispatch_structural_tag(self, key_string: str) -> Any:
        return self._invalid("structural_tag", key_string,
                             "structural tags are not supported by the constrain backend; send the "
                             "tool-call format as an ebnf (Lark or GBNF) grammar instead")

    def reset(self) -> None:
        super().reset()
        self.compiler.clear_cache()
        self.errors.clear()

    # -- helpers ------------------------------------------------------------------------------
    def _grammar(self, key_type: str, key_string: str, build: Any) -> Any:
        try:
            compiled = build()
        except (ConstrainError, ValueError, TypeError, json.JSONDecodeError) as exc:
            return self._invalid(key_type, key_string, f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # noqa: BLE001 - a raising future would stop SGLang's scheduler
            logger.exception("constrain: unexpected error compiling %s grammar", key_type)
            return self._invalid(key_type, key_string, f"{type(exc).__name__}: {exc}")
        return ConstrainGrammar(Matcher(compiled), (key_type, key_string), jump_forward_min_bytes=self.jump_forward_min_bytes)

    def _invalid(self, key_type: str, key_string: str, why: str) -> Any:
        self.errors[(key_type, key_string)] = why
        logger.error("constrain: invalid %s grammar %.200r: %s", key_type, key_string, why)
        return INVALID_GRAMMAR_OBJ


def create_backend(server_args: Any, tokenizer: Any, vocab_size: int, eos_token_ids: Optional[Iterable[int]] = None,
                   *_: Any, **options: Any) -> ConstrainGrammarBackend:
    """The factory SGLang's register_grammar_backend expects: (server_args, tokenizer,
    vocab_size, eos_token_ids) → backend. Reads --constrained-json-disable-any-whitespace."""
    options.setdefault("any_whitespace", not getattr(server_args, "constrained_json_disable_any_whitespace", False))
    return ConstrainGrammarBackend(tokenizer, vocab_size, eos_token_ids=eos_token_ids, **options)


def register(name: str = "constrain", **options: Any) -> None:
    """Make `--grammar-backend <name>` use constrain in this process (call before the server
    starts its scheduler). `options` go to ConstrainGrammarBackend (json_strict=...)."""
    try:
        from sglang.srt.constrained.base_grammar_backend import register_grammar_backend  # type: ignore[import-not-found]
    except ImportError as exc:
        raise ImportError(
            "constrain.integrations.sglang.register needs an SGLang with register_grammar_backend "
            f"(sglang.srt.constrained.base_grammar_backend): {exc}; pip install 'sglang>=0.4.7'"
        ) from exc

    def factory(server_args: Any, tokenizer: Any, vocab_size: int, eos_token_ids: Any = None, *rest: Any) -> ConstrainGrammarBackend:
        return create_backend(server_args, tokenizer, vocab_size, eos_token_ids, **options)

    register_grammar_backend(name, factory)


def _as_ids(ids: Any) -> list[int]:
    if isinstance(ids, int):
        return [ids]
    return [int(t) for t in ids]


def _whole_characters(data: bytes) -> str:
    """`data` decoded up to its first byte that does not complete a UTF-8 character."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data[: exc.start].decode("utf-8")


__all__ = [
    "ANY_JSON",
    "ConstrainGrammar",
    "ConstrainGrammarBackend",
    "HAVE_SGLANG",
    "INVALID_GRAMMAR_OBJ",
    "KEY_TYPES",
    "create_backend",
    "register",
]
