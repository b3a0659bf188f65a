"""CompiledGrammar: what a compile produces and every Matcher of it shares.

Immutable from the outside and safe to share between threads. It wraps a *token automaton*
(a DFA for regular grammars; a pushdown automaton for context-free ones later) and holds the
rules every grammar kind shares, once: special tokens are never text, EOS ids are allowed exactly
where the grammar may end, and after an EOS the matcher is terminated.
"""

from __future__ import annotations

from typing import Any, Hashable, Iterable, Mapping, Optional, Protocol

import numpy as np

from .errors import DocumentError
from .vocab import Vocabulary
from .vocab.special_bytes import virtual_bytes

TERMINATED = -2  # the matcher state after an EOS token was accepted


class TokenAutomaton(Protocol):
    """What a CompiledGrammar needs of its automaton. States are immutable and hashable, so a
    Matcher's history of states gives rollback and fork for free."""

    def initial_state(self) -> Hashable: ...
    def advance(self, state: Any, data: bytes) -> Optional[Hashable]: ...
    def mask_row(self, state: Any) -> np.ndarray: ...  # int32 words; EOS bits where accepting
    def eos_row(self) -> np.ndarray: ...
    def row_cache(self) -> dict[Any, np.ndarray]: ...
    def is_accepting(self, state: Any) -> bool: ...
    def forced_bytes(self, state: Any) -> bytes: ...
    def stats(self) -> dict[str, int]: ...


class CompiledGrammar:
    """A grammar compiled against one vocabulary. Create with `Compiler`; use through `Matcher`."""

    __slots__ = (
        "kind", "source", "options", "vocab", "automaton", "relaxations", "annotations",
        "warm", "_token_bytes", "_special", "_eos",
    )

    def __init__(
        self,
        kind: str,
        source: str,
        options: Mapping[str, Any],
        vocab: Vocabulary,
        automaton: TokenAutomaton,
        relaxations: tuple[str, ...] = (),
        annotations: tuple[str, ...] = (),
        warm: Optional[Any] = None,
    ) -> None:
        """`relaxations`: what a non-strict compile enforced less than the source asks;
        `annotations`: what the source says that is not a constraint we enforce (e.g. formats);
        `warm`: where the automaton's learned tables are kept on disk (warm_store.WarmStore)."""
        self.kind = kind
        self.source = source
        self.options = dict(options)
        self.vocab = vocab
        self.automaton = automaton
        self.relaxations = tuple(relaxations)
        self.annotations = tuple(annotations)
        self.warm = warm
        self._token_bytes = vocab.token_bytes
        self._special = vocab.special_ids
        self._eos = vocab.eos_token_ids

    def __repr__(self) -> str:
        src = self.source if len(self.source) <= 60 else self.source[:57] + "..."
        return f"CompiledGrammar({self.kind}, {src!r}, vocab={self.vocab.name})"

    @property
    def dfa(self) -> Any:
        """The DFA of a regular grammar (for inspection and tests)."""
        return self.automaton.dfa  # type: ignore[attr-defined]

    # -- the interface the Matcher walks ------------------------------------------------------
    def initial_state(self) -> Any:
        return self.automaton.initial_state()

    def next_state(self, state: Any, token_id: int) -> Optional[Any]:
        """State after `token_id`, or None if the grammar rejects it there. Ids must be in range."""
        if state == TERMINATED:
            return None
        if token_id in self._eos and self.automaton.is_accepting(state):
            return TERMINATED
        if token_id >= len(self._token_bytes):
            return None
        if token_id in self._special:  # read where a grammar asks for it (vocab/special_bytes.py)
            return self.automaton.advance(state, virtual_bytes(token_id))
        data = self._token_bytes[token_id]
        if not data:
            return None
        return self.automaton.advance(state, data)

    def mask_row(self, state: Any) -> np.ndarray:
        if state == TERMINATED:
            return self.automaton.eos_row()
        return self.automaton.mask_row(state)

    def row_cache(self) -> dict[Any, np.ndarray]:
        """The live state -> row dict (read-only use): lets the Matcher skip two calls per mask."""
        return self.automaton.row_cache()

    def request_ended(self) -> None:
        """A matcher of this grammar accepted an EOS: a moment to keep what masks learned."""
        if self.warm is not None:
            self.warm.request_ended()

    def is_accepting(self, state: Any) -> bool:
        return state == TERMINATED or self.automaton.is_accepting(state)

    def forced_bytes(self, state: Any) -> bytes:
        if state == TERMINATED:
            return b""
        return self.automaton.forced_bytes(state)

    def accepts(self, text: "str | bytes") -> bool:
        """True if `text` (its UTF-8 bytes) is a complete sentence of the grammar; no tokenizer
        involved. For checking documents, not for decoding."""
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        state = self.automaton.advance(self.automaton.initial_state(), data)
        return state is not None and self.automaton.is_accepting(state)

    def warm_up(self, documents: Iterable["str | bytes"]) -> int:
        """Compute the masks at every byte of each document (texts of the grammar, e.g. sample
        outputs), so that requests meeting those positions find them known; with a disk cache,
        the tables learned are stored, and later processes start with them (docs/lark.md, The
        disk cache). Every byte, not the tokens of one tokenizer: every position any
        tokenization of the text can reach. Returns how many masks were computed;
        DocumentError names the document and byte where the grammar stops reading one."""
        a = self.automaton
        rows = a.row_cache()
        computed = 0
        for k, doc in enumerate(documents):
            data = doc.encode("utf-8") if isinstance(doc, str) else bytes(doc)
            state = a.initial_state()
            for i in range(len(data) + 1):
                if state not in rows:
                    a.mask_row(state)
                    computed += 1
                if i == len(data):
                    break
                state = a.advance(state, data[i : i + 1])
                if state is None:
                    raise DocumentError(k, i, data[max(0, i - 20) : i + 1])
        if self.warm is not None:
            self.warm.store(wait=True)  # (after a store under way: this one holds more)
        return computed

    def stats(self) -> dict[str, int]:
        """Sizes and cache figures of the automaton (states, rows cached, row memory, ...)."""
        return self.automaton.stats()
