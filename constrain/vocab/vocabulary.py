"""The Vocabulary: the exact bytes every token id adds to the text, and which ids are
never text.

Everything downstream (automata over bytes, token masks, caches) depends only on
this object, so it is immutable and identified by a content fingerprint: two
loads of the same tokenizer compare equal and share caches, whatever the path.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Iterable
from typing import Any

import numpy as np

from constrain.errors import TokenError, VocabularyError

_FINGERPRINT_TAG = b"constrain.vocab.v1\0"


class Vocabulary:
    """Token id -> exact bytes, special ids, stop ids and the model's logits width.

    `token_bytes[i]` is what token i contributes in the middle of a decoded text:
    raw bytes for byte-level BPE (possibly incomplete UTF-8), " " for SentencePiece's
    "▁" (decoders drop it on a text's first token; we keep it). Special tokens keep
    their text as UTF-8 for display but are listed in `special_ids`, so a grammar
    never emits them; ids without any token (holes) are special with empty bytes.
    """

    __slots__ = (
        "token_bytes",
        "special_ids",
        "eos_token_ids",
        "size",
        "logits_width",
        "fingerprint",
        "name",
        "_lookup",
    )

    token_bytes: tuple[bytes, ...]
    special_ids: frozenset[int]
    eos_token_ids: frozenset[int]
    size: int
    logits_width: int
    fingerprint: str
    name: str
    _lookup: dict[bytes, int] | None  # bytes -> id, built on first token_id() call

    def __init__(
        self,
        token_bytes: Iterable[bytes],
        special_ids: Iterable[int],
        eos_token_ids: Iterable[int],
        *,
        logits_width: int | None = None,
        name: str = "custom",
    ) -> None:
        table = _as_bytes_tuple(token_bytes)
        size = len(table)
        if size == 0:
            raise VocabularyError(f"vocabulary {name!r} has no tokens")
        specials = _id_set(special_ids, size, "special_ids", name)
        eos = _id_set(eos_token_ids, size, "eos_token_ids", name)
        width = size if logits_width is None else operator.index(logits_width)
        if width < size:
            raise VocabularyError(
                f"vocabulary {name!r}: logits_width {width} is smaller than its {size} token ids; "
                "the model's logits must cover every id "
                "(pass logits_width >= size or leave it None)"
            )
        put = object.__setattr__
        put(self, "token_bytes", table)
        put(self, "special_ids", specials)
        put(self, "eos_token_ids", eos)
        put(self, "size", size)
        put(self, "logits_width", width)
        put(self, "name", str(name))
        put(self, "fingerprint", _fingerprint(table, specials, eos, width))
        put(self, "_lookup", None)

    @classmethod
    def from_pretrained(
        cls,
        source: Any,
        *,
        eos_token_ids: Iterable[int] | None = None,
        logits_width: int | None = None,
    ) -> Vocabulary:
        """Read a tokenizer object or file (see `constrain.vocab.sources`) into a Vocabulary.

        Without `eos_token_ids`, stop ids are the configured eos plus the well-known
        end-of-turn special tokens present; without `logits_width`, the model width
        the source states (config.json / GGUF), else the vocabulary size.
        """
        from constrain.vocab.eos import resolve_eos
        from constrain.vocab.sources import load_source

        explicit = None if eos_token_ids is None else list(eos_token_ids)
        if explicit is not None and not explicit:
            raise VocabularyError("eos_token_ids is empty; give at least one stop id")
        if isinstance(source, Vocabulary):
            return cls(
                source.token_bytes,
                source.special_ids,
                source.eos_token_ids if explicit is None else explicit,
                logits_width=source.logits_width if logits_width is None else logits_width,
                name=source.name,
            )
        loaded = load_source(source)
        size = len(loaded.token_bytes)
        if explicit is not None:
            eos = explicit
        else:
            eos = sorted(resolve_eos(loaded.token_bytes, loaded.special_ids, loaded.eos_ids))
            if not eos:
                raise VocabularyError(
                    f"{loaded.name}: found no end-of-sequence token (none configured and no "
                    "special token such as </s> or <|im_end|>); pass eos_token_ids=[...]"
                )
        if logits_width is None and loaded.logits_width is not None and loaded.logits_width >= size:
            logits_width = loaded.logits_width
        return cls(
            loaded.token_bytes, loaded.special_ids, eos, logits_width=logits_width, name=loaded.name
        )

    def __len__(self) -> int:
        return self.size

    def decode(self, ids: Iterable[int]) -> bytes:
        """Concatenated bytes of `ids` (a list, numpy array or tensor of token ids)."""
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        table, size = self.token_bytes, self.size
        parts = []
        for raw in ids:
            token_id = operator.index(raw)
            if not 0 <= token_id < size:
                raise TokenError(
                    f"token id {token_id} is outside vocabulary {self.name!r} (0..{size - 1})"
                )
            parts.append(table[token_id])
        return b"".join(parts)

    def token_id(self, text: str | bytes) -> int | None:
        """Id of the token whose bytes are exactly `text` (special tokens by their content).

        A special token wins over a regular token with the same text; among regular
        duplicates the lowest id wins.
        """
        key = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        lookup = self._lookup
        if lookup is None:
            lookup = {}
            specials = self.special_ids
            for token_id, data in enumerate(self.token_bytes):
                if token_id not in specials:
                    lookup.setdefault(data, token_id)
            for token_id in sorted(specials, reverse=True):
                if self.token_bytes[token_id]:
                    lookup[self.token_bytes[token_id]] = token_id
            object.__setattr__(self, "_lookup", lookup)
        return lookup.get(key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocabulary):
            return NotImplemented
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return (
            f"Vocabulary(name={self.name!r}, size={self.size}, logits_width={self.logits_width}, "
            f"special={len(self.special_ids)}, eos={sorted(self.eos_token_ids)}, "
            f"fingerprint={self.fingerprint[:12]})"
        )

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"Vocabulary is immutable (tried to set {key!r})")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"Vocabulary is immutable (tried to delete {key!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild,
            (self.token_bytes, self.special_ids, self.eos_token_ids, self.logits_width, self.name),
        )


def _rebuild(
    token_bytes: tuple[bytes, ...],
    special_ids: frozenset[int],
    eos: frozenset[int],
    width: int,
    name: str,
) -> Vocabulary:
    """Unpickling entry point (slots + immutability rule out the default protocol)."""
    return Vocabulary(token_bytes, special_ids, eos, logits_width=width, name=name)


def _as_bytes_tuple(token_bytes: Iterable[bytes]) -> tuple[bytes, ...]:
    table = tuple(token_bytes)
    if all(type(data) is bytes for data in table):
        return table
    converted = []
    for token_id, data in enumerate(table):
        if isinstance(data, (bytes, bytearray, memoryview)):
            converted.append(bytes(data))
        else:
            raise VocabularyError(
                f"token_bytes[{token_id}] is a {type(data).__name__}, expected bytes"
            )
    return tuple(converted)


def _id_set(ids: Iterable[int], size: int, what: str, name: str) -> frozenset[int]:
    try:
        found = frozenset(operator.index(i) for i in ids)
    except TypeError as exc:
        raise VocabularyError(f"vocabulary {name!r}: {what} must be integers ({exc})") from exc
    outside = sorted(i for i in found if not 0 <= i < size)
    if outside:
        raise VocabularyError(
            f"vocabulary {name!r}: {what} contains {outside[:5]}, "
            f"outside the {size} token ids (0..{size - 1})"
        )
    return found


def _fingerprint(
    table: tuple[bytes, ...], specials: frozenset[int], eos: frozenset[int], width: int
) -> str:
    """sha256 over sizes, each token's length and bytes, special and eos ids (little-endian)."""
    digest = hashlib.sha256(_FINGERPRINT_TAG)
    lengths = np.fromiter(map(len, table), dtype="<i8", count=len(table))
    digest.update(np.array([len(table), width, len(specials), len(eos)], dtype="<i8").tobytes())
    digest.update(lengths.tobytes())
    digest.update(b"".join(table))
    digest.update(np.array(sorted(specials), dtype="<i8").tobytes())
    digest.update(np.array(sorted(eos), dtype="<i8").tobytes())
    return digest.hexdigest()
