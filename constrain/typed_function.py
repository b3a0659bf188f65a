"""`@constrain.function`: a Python function whose return annotation is the output type and whose
docstring is the prompt. Calling it generates under the type's grammar and returns the
validated object.

    @constrain.function
    def extract_person(text: str) -> Person:
        \"\"\"Extract the person described in this text: {text}\"\"\"

The model (the embedded default unless `model=` names another) loads on the first call, once per
process; the grammar compiles once per model. The type is checked when the function is declared,
so a type that cannot become a grammar fails at import, naming the field.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import queue
import threading
import typing
from dataclasses import dataclass, field, replace
from typing import Any, AsyncIterator, Callable, Generic, Iterator, Optional, Sequence, TypeVar

from .compiled import CompiledGrammar
from .decode_loop import GenerationResult, GenerationStats, generate
from .errors import OutputValidationError, TypedOutputError
from .function_prompt import Prompt, PromptTemplate, build_prompt
from .kernels.sampling_params import SamplingParams
from .matcher import spells_complete_document
from .models import LoadedModel, load_model
from .partial_json import parse_partial
from .typed_output import OutputSpec, fields_for_prompt, output_spec, schema_for_prompt

R = TypeVar("R")
OUTPUT_HINTS = ("fields", "schema", "none")


@dataclass(frozen=True)
class FunctionOptions:
    """How a typed function generates. model: None (the embedded SmolLM2), a transformers id or
    path, a .gguf path, or a loaded model with `tokenizer`. output_hint: what the prompt says of
    the output (JSON outputs): "fields" (default) one line naming the fields and their types,
    "schema" the JSON Schema, "none" nothing; the grammar enforces the shape either way. On the 50
    extraction prompts of benchmarks/typed_extraction.py SmolLM2 got 75% of the fields right with
    "fields", 76% with "none" and 57% with "schema" (it copies the schema's words into the
    values); without a hint it ran away inside the quickstart's unbounded name string, which the
    fields line prevents. draft: speculative decoding, as in constrain.generate."""

    model: Any = None
    tokenizer: Any = None
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    seed: Optional[int] = None
    max_new_tokens: int = 512
    draft: Any = None
    system: Optional[str] = None
    output_hint: str = "fields"
    whitespace: str = "compact"
    strict: bool = True

    def __post_init__(self) -> None:
        if self.output_hint not in OUTPUT_HINTS:
            raise ValueError(f"output_hint must be one of {', '.join(map(repr, OUTPUT_HINTS))}, not {self.output_hint!r}")

    def sampling(self) -> SamplingParams:
        return SamplingParams(temperature=self.temperature, top_p=self.top_p, top_k=self.top_k, seed=self.seed)


@dataclass
class FunctionResult(Generic[R]):
    """A call's typed value with the text it was parsed from, the prompt and the generation stats."""

    value: R
    text: str
    prompt: Prompt
    stats: GenerationStats = field(default_factory=GenerationStats)


class TypedFunction(Generic[R]):
    """A declared typed function (see the module docstring). Call it like the function; also
    `.batch(inputs)`, `.stream(...)`, `.result(...)` and their async forms `.acall`, `.abatch`,
    `.astream`. Declared with `async def`, calling it returns a coroutine."""

    def __init__(self, fn: Callable[..., Any], options: FunctionOptions) -> None:
        functools.update_wrapper(self, fn)
        self.options = options
        name = getattr(fn, "__qualname__", repr(fn))
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except Exception as exc:
            raise TypedOutputError(f"{name}'s annotations cannot be resolved: {exc}") from None
        if "return" not in hints:
            raise TypedOutputError(f"{name} has no return annotation: annotate it with the type to generate, e.g. -> Person")
        try:
            self.output: OutputSpec = output_spec(hints["return"], whitespace=options.whitespace, strict=options.strict)
        except TypedOutputError as exc:
            raise TypedOutputError(f"{name}: {exc.args[0]}") from None
        self.template = PromptTemplate.of(fn)
        self.is_async = inspect.iscoroutinefunction(fn)
        self._grammars: dict[int, CompiledGrammar] = {}
        self._lock = threading.Lock()
        self._bound: tuple[Any, ...] = ()  # the instance, when read as a method of one

    def __get__(self, instance: Any, owner: Optional[type] = None) -> "TypedFunction[R]":
        """Declared in a class body, it is a method: read from an instance, it is bound to it
        (`self` fills the first parameter; the docstring may name `{self.attr}`); the binding
        shares the declaration's compiled grammars."""
        if instance is None:
            return self
        bound = copy.copy(self)
        bound._bound = (instance,)
        return bound

    def with_options(self, **changes: Any) -> "TypedFunction[R]":
        """The same function with other options (model, temperature, draft, ...)."""
        changed = TypedFunction(self.__wrapped__, replace(self.options, **changes))  # type: ignore[attr-defined]
        changed._bound = self._bound
        return changed

    # -- the pieces a call is made of -----------------------------------------------------------

    def model(self) -> LoadedModel:
        return load_model(self.options.model, self.options.tokenizer)

    def grammar(self, loaded: Optional[LoadedModel] = None) -> CompiledGrammar:
        loaded = loaded or self.model()
        with self._lock:
            if id(loaded) not in self._grammars:
                self._grammars[id(loaded)] = self.output.compile(loaded.compiler)
            return self._grammars[id(loaded)]

    def prompt(self, *args: Any, **kwargs: Any) -> Prompt:
        """The prompt a call with these arguments sends (chat messages for instruct models)."""
        return self._prompt(self.model(), args, kwargs)

    def _prompt(self, loaded: LoadedModel, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Prompt:
        instructions = None
        if self.output.kind == "json" and self.options.output_hint == "fields":
            instructions = fields_for_prompt(self.output.schema or {})
        elif self.output.kind == "json" and self.options.output_hint == "schema":
            instructions = f"Answer with JSON that follows this JSON Schema: {schema_for_prompt(self.output.schema or {})}"
        return build_prompt(self.template.render(self._bound + tuple(args), kwargs), chat=loaded.is_chat,
                            system=self.options.system, instructions=instructions)

    def _finish(self, prompt: Prompt, generated: GenerationResult, grammar: CompiledGrammar) -> FunctionResult[R]:
        if generated.stats.stop_reason == "length" and not spells_complete_document(grammar, generated.token_ids):
            raise OutputValidationError(
                f"{self.__qualname__}: generation stopped at max_new_tokens={self.options.max_new_tokens} "
                "before the output was complete; raise max_new_tokens", generated.text)
        return FunctionResult(self.output.parse(generated.text), generated.text, prompt, generated.stats)

    def _generate(self, args: tuple[Any, ...], kwargs: dict[str, Any], stream: Optional[Callable[[str], None]] = None) -> FunctionResult[R]:
        loaded = self.model()
        grammar = self.grammar(loaded)
        prompt = self._prompt(loaded, args, kwargs)
        with loaded.generation_lock:
            generated = generate(loaded.model, loaded.tokenizer, prompt, grammar, sampling=self.options.sampling(),
                                 max_new_tokens=self.options.max_new_tokens, stream=stream, draft=self.options.draft)
        return self._finish(prompt, generated, grammar)

    # -- synchronous API --------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.is_async:
            return self.acall(*args, **kwargs)
        return self._generate(args, kwargs).value

    def result(self, *args: Any, **kwargs: Any) -> FunctionResult[R]:
        """The call's value with its text, prompt and generation stats."""
        return self._generate(args, kwargs)

    def batch(self, inputs: Sequence[Any], *, return_exceptions: bool = False) -> list[Any]:
        """One batched generation over `inputs`: each a dict of keyword arguments, a tuple of
        positional ones, or the single argument of a one-parameter function. A row that fails to
        validate raises (or, with return_exceptions, stands as its exception)."""
        from .batch_generation import generate_batch

        calls = [self._arguments(item) for item in inputs]
        loaded = self.model()
        grammar = self.grammar(loaded)
        prompts = [self._prompt(loaded, a, k) for a, k in calls]
        with loaded.generation_lock:
            generated = generate_batch(loaded.model, loaded.tokenizer, prompts, [grammar] * len(prompts),
                                       sampling=self.options.sampling(), max_new_tokens=self.options.max_new_tokens)
        values: list[Any] = []
        for i, (prompt, row) in enumerate(zip(prompts, generated)):
            try:
                values.append(self._finish(prompt, row, grammar).value)
            except OutputValidationError as exc:
                if not return_exceptions:
                    raise OutputValidationError(f"batch row {i}: {exc.args[0]}", exc.text) from None
                values.append(exc)
        return values

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        """Partial values as the output grows (JSON outputs: each time a field completes, a
        Pydantic model holds the fields so far, unvalidated; regex/grammar outputs: the text so
        far), then the validated value last. Closing the iterator early stops generation."""
        pieces: "queue.Queue[Any]" = queue.Queue()
        cancelled = threading.Event()
        done = object()

        def on_piece(piece: str) -> None:
            if cancelled.is_set():
                raise _Cancelled()
            pieces.put(piece)

        def work() -> None:
            try:
                pieces.put((done, self._generate(args, kwargs, stream=on_piece)))
            except _Cancelled:
                pass
            except BaseException as exc:  # handed to the consumer, raised there
                pieces.put((done, exc))

        threading.Thread(target=work, daemon=True, name="constrain-stream").start()
        text, last = "", None
        try:
            while True:
                item = pieces.get()
                if isinstance(item, tuple) and item and item[0] is done:
                    if isinstance(item[1], BaseException):
                        raise item[1]
                    yield item[1].value
                    return
                text += item
                if self.output.kind != "json":
                    yield text
                    continue
                partial = parse_partial(text)
                if partial is not None and partial != last:
                    last = partial
                    yield self.output.partial(partial)
        finally:
            cancelled.set()

    # -- asynchronous API (generation runs on a worker thread) -------------------------------------

    async def acall(self, *args: Any, **kwargs: Any) -> R:
        return (await asyncio.to_thread(self._generate, args, kwargs)).value

    async def abatch(self, inputs: Sequence[Any], *, return_exceptions: bool = False) -> list[Any]:
        return await asyncio.to_thread(self.batch, inputs, return_exceptions=return_exceptions)

    async def astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        loop = asyncio.get_running_loop()
        items: "asyncio.Queue[tuple[str, Any]]" = asyncio.Queue()
        stop = threading.Event()

        def work() -> None:
            stream = self.stream(*args, **kwargs)
            try:
                for value in stream:
                    if stop.is_set():
                        break
                    loop.call_soon_threadsafe(items.put_nowait, ("value", value))
                loop.call_soon_threadsafe(items.put_nowait, ("end", None))
            except BaseException as exc:
                loop.call_soon_threadsafe(items.put_nowait, ("error", exc))
            finally:
                stream.close()

        threading.Thread(target=work, daemon=True, name="constrain-astream").start()
        try:
            while True:
                kind, value = await items.get()
                if kind == "end":
                    return
                if kind == "error":
                    raise value
                yield value
        finally:
            stop.set()

    def _arguments(self, item: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if isinstance(item, dict):
            return (), dict(item)
        if isinstance(item, tuple):
            return item, {}
        if len(self.template.signature.parameters) - len(self._bound) != 1:
            raise TypeError(f"{self.__qualname__}.batch: give each input as a tuple of arguments or a dict of keyword arguments")
        return (item,), {}

    def __repr__(self) -> str:
        bound = f" bound to {self._bound[0]!r}" if self._bound else ""
        return f"<constrain.function {self.__qualname__}{bound} -> {self.output.kind}>"


class _Cancelled(Exception):
    """Raised inside the stream callback when the consumer closed the iterator."""


def function(fn: Optional[Callable[..., Any]] = None, /, **options: Any) -> Any:
    """Declare a typed function: `@constrain.function` or `@constrain.function(model=..., temperature=...,
    draft=..., max_new_tokens=..., system=..., output_hint=...)`; see FunctionOptions."""
    try:
        settings = FunctionOptions(**options)
    except TypeError as exc:
        raise TypeError(f"constrain.function: {exc}; options are {', '.join(FunctionOptions.__dataclass_fields__)}") from None
    settings.sampling()  # bad temperature / top_p fail here, at declaration
    if fn is None:
        return lambda f: TypedFunction(f, settings)
    return TypedFunction(fn, settings)
