"""A typed function's prompt: its docstring as a template over its parameters, sent as a chat
user message to instruct models (their chat template applies) and as plain text otherwise."""

from __future__ import annotations

import inspect
import string
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from .errors import TypedOutputError

Prompt = Union[str, list[dict[str, str]]]


@dataclass(frozen=True)
class PromptTemplate:
    """The docstring of `fn` with `{param}` placeholders; checked when the function is declared."""

    template: str
    signature: inspect.Signature
    name: str

    @classmethod
    def of(cls, fn: Callable[..., Any]) -> "PromptTemplate":
        doc = inspect.getdoc(fn)
        name = getattr(fn, "__qualname__", repr(fn))
        if not doc:
            raise TypedOutputError(f"{name} has no docstring: its docstring is the prompt template, e.g. \"Extract the person in: {{text}}\"")
        signature = inspect.signature(fn)
        params = set(signature.parameters)
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(doc) if f is not None]
        except ValueError as exc:
            raise TypedOutputError(f"{name}'s docstring is not a valid template: {exc} (write literal braces as {{{{ and }}}})") from None
        for field in fields:
            root = field.split(".", 1)[0].split("[", 1)[0]
            if not root or root not in params:
                raise TypedOutputError(
                    f"{name}'s docstring names {{{field}}}, which is not a parameter "
                    f"({', '.join(sorted(params)) or 'it has none'}); write literal braces as {{{{ and }}}}")
        return cls(doc, signature, name)

    def render(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.name}(): {exc}") from None
        bound.apply_defaults()
        return self.template.format(**bound.arguments)


def build_prompt(text: str, *, chat: bool, system: Optional[str], instructions: Optional[str]) -> Prompt:
    """`text` plus the output instructions, as chat messages for instruct models."""
    body = f"{text}\n\n{instructions}" if instructions else text
    if not chat:
        return f"{system}\n\n{body}" if system else body
    messages = [{"role": "system", "content": system}] if system else []
    return messages + [{"role": "user", "content": body}]
