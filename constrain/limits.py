"""Explicit, per-compile limits: no process-wide knobs, every limit names how to raise it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Bounds on compile work. Pass `Compiler(vocab, limits=Limits(max_dfa_states=...))`."""

    max_nfa_states: int = 500_000
    max_dfa_states: int = 100_000
    max_compile_seconds: float = 30.0
    # Grammars of rules (JSON Schema objects and arrays, Lark): how deep the text may nest (frames
    # on one stack), how many readings one position may keep (an ambiguous grammar's stacks), and
    # how long one mask may take to compute, and how long accepting one token may take (an
    # ambiguous grammar's thousands of deep stacks can make a single token cost seconds).
    max_stack_depth: int = 10_000
    max_stacks: int = 10_000
    max_mask_seconds: float = 10.0
    max_accept_seconds: float = 10.0

    def __post_init__(self) -> None:
        for name in ("max_nfa_states", "max_dfa_states", "max_stack_depth", "max_stacks"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be positive")
        for name in ("max_compile_seconds", "max_mask_seconds", "max_accept_seconds"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be positive")

    def stack_key(self) -> list:
        """The limits that change what a grammar of rules does (part of its cache key)."""
        return [self.max_stack_depth, self.max_stacks, self.max_mask_seconds, self.max_accept_seconds]
