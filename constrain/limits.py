"""Explicit, per-compile limits: no process-wide knobs, every limit names how to raise it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Bounds on compile work. Pass `Compiler(vocab, limits=Limits(max_dfa_states=...))`."""

    max_nfa_states: int = 500_000
    max_dfa_states: int = 100_000
    max_compile_seconds: float = 30.0

    def __post_init__(self) -> None:
        for name in ("max_nfa_states", "max_dfa_states"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be positive")
        if self.max_compile_seconds <= 0:
            raise ValueError("Limits.max_compile_seconds must be positive")
