"""Matcher: one request's position in a compiled grammar.

The state history is a list of immutable automaton states, one per accepted token, so rollback
is a pop and fork is a list copy. The same design carries a stack-based (context-free) state
later: only the state values change, not this class.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from .compiled import TERMINATED, CompiledGrammar
from .errors import RollbackError, TokenError
from .index.row_bits import token_id_array



def _torch() -> Any:
    """torch if the caller has imported it (a tensor can only exist then); keeps import light."""
    return sys.modules.get("torch")


class Matcher:
    """Per-request grammar state: masks, accept, validate, rollback, fork, forced bytes."""

    __slots__ = ("compiled", "_history", "_width", "_rows", "_view")

    def __init__(self, compiled: CompiledGrammar) -> None:
        if not isinstance(compiled, CompiledGrammar):
            raise TypeError(f"Matcher needs a CompiledGrammar, got {type(compiled).__name__}")
        self.compiled = compiled
        self._history: list[Any] = [compiled.initial_state()]
        self._width = compiled.vocab.logits_width
        self._rows = compiled.row_cache()  # shared dict state -> row; misses go through mask_row
        self._view: Any = None  # see _row_view

    # -- masks --------------------------------------------------------------------------------
    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> None:
        """Write the allowed next tokens into row `index` of `bitmask` (or into a 1-D bitmask).

        `bitmask`: torch int32 tensor or NumPy int32 array, shape (words,) or (batch, words), with
        words >= ceil(vocab_size / 32). Words past the vocabulary are zeroed (always masked)."""
        state = self._history[-1]
        row = self._rows.get(state)
        if row is None:
            row = self.compiled.mask_row(state)
        cached = self._view or _last_view[0]
        if (
            cached is not None
            and cached[0]() is bitmask
            and cached[1] == bitmask.data_ptr()
            and cached[2] == bitmask.shape
            and -cached[4] <= index < cached[4]
        ):
            target = cached[3][index]  # the common case: the engine's bitmask tensor, again
            self._view = cached
        else:
            target, self._view = _row_view(bitmask, index)
            if self._view is not None:
                _last_view[0] = self._view
            if target is None:
                _fill_device_tensor(bitmask, index, row)
                return
        n = row.shape[0]
        if target.shape[0] < n:
            raise ValueError(
                f"bitmask has {target.shape[0]} words per row; this vocabulary needs {n} "
                "(allocate it with allocate_token_bitmask(batch, vocab_size))"
            )
        target[:n] = row
        if target.shape[0] > n:
            target[n:] = 0

    def allowed_token_ids(self) -> np.ndarray:
        """The allowed next token ids, sorted (for debugging and tests; the bitmask is the fast path)."""
        return token_id_array(self.compiled.mask_row(self._history[-1]))

    # -- advancing ------------------------------------------------------------------------------
    def _check_id(self, token_id: int) -> int:
        try:
            tid = int(token_id)
        except (TypeError, ValueError):
            raise TokenError(f"token id must be an integer, got {token_id!r}") from None
        if tid != token_id or not 0 <= tid < self._width:
            raise TokenError(
                f"token id {token_id!r} is out of range for vocabulary {self.compiled.vocab.name!r} "
                f"(valid ids: 0..{self._width - 1})"
            )
        return tid

    def accept_token(self, token_id: int) -> bool:
        """Advance by one token; False (and no change) if the grammar rejects it here."""
        nxt = self.compiled.next_state(self._history[-1], self._check_id(token_id))
        if nxt is None:
            return False
        self._history.append(nxt)
        if nxt == TERMINATED:
            self.compiled.request_ended()
        return True

    def accept_tokens(self, token_ids: Iterable[int]) -> int:
        """Accept tokens in order until one is rejected; returns how many were accepted."""
        count = 0
        for tid in token_ids:
            if not self.accept_token(tid):
                break
            count += 1
        return count

    def validate_tokens(self, token_ids: Sequence[int]) -> int:
        """Length of the longest accepted prefix of `token_ids`, without advancing."""
        state = self._history[-1]
        count = 0
        for tid in token_ids:
            state = self.compiled.next_state(state, self._check_id(tid))
            if state is None:
                break
            count += 1
        return count

    def rollback(self, num_tokens: int = 1) -> None:
        """Undo the last `num_tokens` accepted tokens."""
        if num_tokens < 0:
            raise RollbackError(f"rollback needs a non-negative count, got {num_tokens}")
        if num_tokens > len(self._history) - 1:
            raise RollbackError(
                f"cannot roll back {num_tokens} tokens: only {len(self._history) - 1} accepted"
            )
        if num_tokens:
            del self._history[-num_tokens:]

    # -- queries ------------------------------------------------------------------------------
    def is_accepting(self) -> bool:
        """True if the output so far is a complete sentence of the grammar."""
        return self.compiled.is_accepting(self._history[-1])

    def is_terminated(self) -> bool:
        """True once an EOS token has been accepted."""
        return self._history[-1] == TERMINATED

    def must_terminate(self) -> bool:
        """True when only EOS may come next: the output is complete and admits no more text
        (a decode loop can stop here without another forward pass)."""
        state = self._history[-1]
        if state == TERMINATED or not self.compiled.is_accepting(state):
            return False
        row = self._rows.get(state)
        if row is None:
            row = self.compiled.mask_row(state)
        return bool(np.array_equal(row, self.compiled.mask_row(TERMINATED)))

    def forced_bytes(self) -> bytes:
        """The bytes every continuation must start with (empty where there is a choice)."""
        return self.compiled.forced_bytes(self._history[-1])

    @property
    def state(self) -> Any:
        """The current automaton state (immutable, hashable): what masks and forced bytes are a
        function of. For tools that step `compiled.next_state` without advancing the matcher."""
        return self._history[-1]

    @property
    def num_accepted_tokens(self) -> int:
        return len(self._history) - 1

    def fork(self) -> "Matcher":
        """An independent matcher at the same position (shares the compiled grammar)."""
        other = Matcher.__new__(Matcher)
        other.compiled = self.compiled
        other._history = list(self._history)
        other._width = self._width
        other._rows = self._rows
        other._view = None
        return other

    def reset(self) -> None:
        """Back to the start of the grammar."""
        del self._history[1:]

    def __repr__(self) -> str:
        return f"Matcher({self.compiled!r}, accepted={self.num_accepted_tokens}, terminated={self.is_terminated()})"


# A Matcher keeps the NumPy view of the last CPU bitmask tensor it filled: `Tensor.numpy()` costs
# more than the 16 KB copy, and engines fill the same tensor every step. The view is reused only
# while the tensor object (held weakly), its data pointer and its shape are unchanged (a resize
# reallocates). New matchers start from the last view any matcher made: engines fill one tensor
# for request after request (this view keeps at most that one buffer's memory alive).
_View = tuple[Any, int, Any, np.ndarray, int]
_last_view: list[Optional[_View]] = [None]


def _row_view(bitmask: Any, index: int) -> tuple[np.ndarray | None, _View | None]:
    """(the 1-D int32 NumPy row to write into, a reusable view of a 2-D CPU tensor or None).
    The row is None for a tensor on an accelerator."""
    view: _View | None = None
    if isinstance(bitmask, np.ndarray):
        target = bitmask
    else:
        torch = _torch()
        if torch is None or not isinstance(bitmask, torch.Tensor):
            raise TypeError(
                f"bitmask must be a torch.Tensor or numpy.ndarray, got {type(bitmask).__name__}"
            )
        if not bitmask.is_cpu:
            return None, None
        if bitmask.dtype != torch.int32:
            raise TypeError(f"bitmask must be int32, got {bitmask.dtype}")
        target = bitmask.numpy()
        if target.ndim == 2:
            view = (weakref.ref(bitmask), bitmask.data_ptr(), bitmask.shape, target, target.shape[0])
    if target.dtype != np.int32:
        raise TypeError(f"bitmask must be int32, got {target.dtype}")
    if target.ndim == 2:
        if not -target.shape[0] <= index < target.shape[0]:
            raise IndexError(f"bitmask row {index} out of range for batch {target.shape[0]}")
        target = target[index]
    elif target.ndim != 1:
        raise ValueError(f"bitmask must be 1-D or 2-D, got shape {tuple(target.shape)}")
    return target, view


def _fill_device_tensor(bitmask: Any, index: int, row: np.ndarray) -> None:
    import torch

    if bitmask.dtype != torch.int32:
        raise TypeError(f"bitmask must be int32, got {bitmask.dtype}")
    target = bitmask[index] if bitmask.dim() == 2 else bitmask
    n = row.shape[0]
    if target.shape[0] < n:
        raise ValueError(f"bitmask has {target.shape[0]} words per row; this vocabulary needs {n}")
    target[:n].copy_(torch.from_numpy(np.array(row)), non_blocking=False)
    if target.shape[0] > n:
        target[n:] = 0


def spells_complete_document(grammar: CompiledGrammar, token_ids: Sequence[int]) -> bool:
    """Whether `token_ids` spell a whole document of `grammar` (every token accepted, the grammar
    may end there): how a decode loop cut at max_new_tokens tells a finished output (a number, a
    regex match, SQL followed by comments) from a half one."""
    matcher = Matcher(grammar)
    return matcher.accept_tokens(token_ids) == len(token_ids) and matcher.is_accepting()
