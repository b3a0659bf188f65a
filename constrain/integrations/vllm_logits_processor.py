"""vLLM's plug-in route: a batch-level logits processor (vLLM v1's `LogitsProcessor` contract).

    LLM(model, logits_processors=["constrain.integrations.vllm_logits_processor:ConstrainLogitsProcessor"])
    llm.generate(prompt, SamplingParams(extra_args={"constrain": {"json_schema": schema}}))

A request without the "constrain" key is left untouched.

How vLLM drives it: `update_state(batch_update)` before each forward pass reports rows added
(index, params, prompt ids, the request's live output-id list), removed, and moved (swaps and
one-way moves that compact the batch), in that order; `apply(logits)` then gets one row of
logits per request, in batch order. Each row's Matcher is advanced inside `apply()` from its
live output list: on GPUs with async scheduling the list holds -1 placeholders until just
before sampling (vLLM resolves them only for processors passed by name, which is why this class
is no entry point). All rows' masks are filled in one call and applied with constrain's kernel.
A grammar compiles on a thread from the moment its request is added, so during the forward pass
(cached per model and stop-token set); `validate_params` compiles it against a byte vocabulary
first, so a broken grammar is refused as the request enters vLLM.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Optional

from ..batch_masks import fill_batch_bitmask
from ..compiled import CompiledGrammar
from ..compiler import Compiler
from ..errors import ConstrainError, EngineOptionsError
from ..kernels.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from ..matcher import Matcher
from .vllm_compilers import check_spec, compiler_for, vocabulary_for
from .vllm_options import GrammarSpec, compile_spec, spec_from_extra_args

try:  # subclass vLLM's base class when vLLM is installed (vLLM checks issubclass on load)
    from vllm.v1.sample.logits_processor import LogitsProcessor as _Base
except ImportError:  # vLLM is optional: the class still works on its own (tests, other engines)
    _Base = object  # type: ignore[assignment,misc]

logger = logging.getLogger(__name__)

FQCN = "constrain.integrations.vllm_logits_processor:ConstrainLogitsProcessor"


@dataclass
class _Row:
    """One constrained request in the batch: its grammar (compiling until the first apply), its
    matcher, and the live list vLLM appends to."""

    output_ids: list[int]
    compiler: Compiler
    pending: Optional["Future[CompiledGrammar]"] = None  # the compile, running during the forward pass
    matcher: Optional[Matcher] = None
    seen: int = 0  # how many of output_ids the matcher has accepted
    failed: bool = False  # the output left the grammar (or it did not compile): EOS only now


class ConstrainLogitsProcessor(_Base):  # type: ignore[misc,valid-type]
    """Masks the logits of every request whose `extra_args` carry a "constrain" grammar."""

    def __init__(self, vllm_config: Any, device: Any, is_pin_memory: bool) -> None:
        from vllm.tokenizers import cached_tokenizer_from_config

        model_config = vllm_config.model_config
        self._setup(
            cached_tokenizer_from_config(model_config=model_config),
            model_config.get_vocab_size(),
            vllm_config.scheduler_config.max_num_seqs,
            device,
            is_pin_memory,
        )

    @classmethod
    def for_tokenizer(cls, tokenizer: Any, logits_width: int, max_num_seqs: int, device: Any = "cpu") -> "ConstrainLogitsProcessor":
        """A processor without a vLLM config: for another engine that speaks vLLM's contract,
        and for tests that replay vLLM's calls."""
        self = cls.__new__(cls)
        self._setup(tokenizer, logits_width, max_num_seqs, device, False)
        return self

    def _setup(self, tokenizer: Any, logits_width: int, max_num_seqs: int, device: Any, pin: bool) -> None:
        self._vocab = vocabulary_for(tokenizer, logits_width)
        self._width = logits_width
        self._device = device
        self._rows: dict[int, _Row] = {}
        bitmask = allocate_token_bitmask(max_num_seqs, logits_width)
        self._bitmask = bitmask.pin_memory() if pin else bitmask
        # grammars compile on this thread between update_state and apply, i.e. while the model's
        # forward pass runs (torch releases the GIL), instead of holding up the step
        self._compiles = ThreadPoolExecutor(1, thread_name_prefix="constrain-compile")
        threads = max(1, min(4, (os.cpu_count() or 2) // 2))
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="constrain-masks") if threads > 1 else None

    @property
    def constrained_rows(self) -> list[int]:
        """Batch indices of the rows this processor masks (for logs and tests)."""
        return sorted(self._rows)

    # -- vLLM's contract ----------------------------------------------------------------------
    @classmethod
    def validate_params(cls, sampling_params: Any) -> None:
        """Refuse malformed options or a grammar that does not compile (ValueError: vLLM turns it
        into a client error)."""
        spec = spec_from_extra_args(getattr(sampling_params, "extra_args", None))
        if spec is None:
            return
        try:
            check_spec(spec)
        except ConstrainError as exc:
            if isinstance(exc, ValueError):
                raise
            raise EngineOptionsError(f'extra_args["constrain"]: the {spec.kind} does not compile: {exc}') from exc

    def is_argmax_invariant(self) -> bool:
        """Masks change which token is the argmax: vLLM must run this for greedy rows too."""
        return False

    def update_state(self, batch_update: Any) -> None:
        if batch_update is None:
            return
        rows = self._rows
        for index in batch_update.removed:
            rows.pop(index, None)
        for index, params, _prompt_ids, output_ids in batch_update.added:
            row = self._new_row(params, output_ids)
            if row is None:
                rows.pop(index, None)  # an added request replaces whatever had this index
            else:
                rows[index] = row
        for a, b, direction in batch_update.moved:
            first, second = rows.pop(a, None), rows.pop(b, None)
            if first is not None:
                rows[b] = first
            if second is not None and getattr(direction, "name", str(direction)) == "SWAP":
                rows[a] = second

    def apply(self, logits: Any) -> Any:
        if not self._rows:
            return logits
        batch = logits.shape[0]
        matchers: list[Optional[Matcher]] = [None] * batch
        for index, row in self._rows.items():
            if index < batch:
                matchers[index] = self._advance(row)
        active = [i for i, m in enumerate(matchers) if m is not None]
        if not active:
            return logits
        bitmask = self._bitmask[:batch]
        fill_batch_bitmask(matchers, bitmask, executor=self._executor)
        mask = bitmask if logits.device.type == "cpu" else bitmask.to(logits.device, non_blocking=True)
        apply_token_bitmask_inplace(logits, mask, indices=active)
        return logits

    # -- rows ---------------------------------------------------------------------------------
    def _new_row(self, params: Any, output_ids: list[int]) -> Optional[_Row]:
        try:
            spec = spec_from_extra_args(getattr(params, "extra_args", None))
        except ValueError as exc:  # validate_params refuses these; another front end may not
            logger.error("constrain: request options ignored: %s", exc)
            return None
        if spec is None:
            return None
        compiler = compiler_for(self._vocab, getattr(params, "all_stop_token_ids", None))
        return _Row(output_ids, compiler, pending=self._compiles.submit(compile_spec, compiler, spec))

    def _advance(self, row: _Row) -> Matcher:
        """The row's matcher after the tokens vLLM appended since the last step."""
        if row.pending is not None:
            try:
                row.matcher = Matcher(row.pending.result())
            except Exception as exc:  # noqa: BLE001 - a bad grammar must end its request, not the engine
                logger.error("constrain: a grammar failed to compile (%s); the request may only end", exc)
                row.matcher, row.failed = _end_only(row.compiler), True
            row.pending = None
        matcher = row.matcher
        assert matcher is not None
        ids = row.output_ids
        if row.failed or row.seen >= len(ids):
            return matcher
        for token in ids[row.seen :]:
            if token < 0:
                # async scheduling's placeholder, which vLLM resolves before sampling only for
                # processors named in LLM(logits_processors=[...]): a mask now would be a guess
                logger.error(
                    "constrain: output position %d is still a placeholder at sampling time; pass the "
                    "processor as LLM(logits_processors=[%r]) or turn async scheduling off. The "
                    "request may only end", row.seen, FQCN,
                )
                row.matcher, row.failed = _end_only(row.compiler), True
                return row.matcher
            if matcher.is_terminated():
                row.seen += 1  # more EOS after the end (ignore_eos): nothing to advance
                continue
            if not matcher.accept_token(token):
                logger.error(
                    "constrain: token %d at output position %d leaves the grammar; the request may only end",
                    token, row.seen,
                )
                row.matcher, row.failed = _end_only(row.compiler), True
                return row.matcher
            row.seen += 1
        return matcher


def _end_only(compiler: Compiler) -> Matcher:
    """A matcher that allows only EOS (the empty regex): how a broken request is ended."""
    return Matcher(compile_spec(compiler, GrammarSpec("regex", "")))
