"""What every loader returns: raw token bytes plus what the source says about them.

Loaders only read; turning this into a validated, immutable `Vocabulary`
(eos resolution, logits width, fingerprint) happens in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from constrain.errors import VocabularyError


@dataclass
class LoadedVocab:
    """Mutable scratch result of one loader.

    `eos_ids` are the ids the source configures as end of sequence (before the
    well-known stop tokens are added); `logits_width` is the model's output width
    when the source states it (config.json vocab_size, GGUF <arch>.vocab_size).
    """

    name: str
    token_bytes: list[bytes]
    special_ids: set[int]
    eos_ids: set[int] = field(default_factory=set)
    logits_width: int | None = None

    def set_special(self, token_id: int, content: str) -> None:
        """Make `token_id` a special token with text `content`, growing the table if needed."""
        if token_id < 0:
            raise VocabularyError(f"{self.name}: negative token id {token_id} for {content!r}")
        self.extend_to(token_id + 1)
        self.token_bytes[token_id] = content.encode("utf-8")
        self.special_ids.add(token_id)

    def extend_to(self, size: int) -> None:
        """Grow to `size` ids; new ids are holes (empty bytes, special: never text)."""
        start = len(self.token_bytes)
        if size > start:
            self.token_bytes.extend([b""] * (size - start))
            self.special_ids.update(range(start, size))


def from_entries(name: str, entries: dict[int, bytes], special_ids: set[int]) -> LoadedVocab:
    """Build a dense table from sparse id -> bytes; ids nobody defines become special holes."""
    if not entries:
        raise VocabularyError(f"{name}: the tokenizer defines no tokens")
    low = min(entries)
    if low < 0:
        raise VocabularyError(f"{name}: negative token id {low}")
    size = max(entries) + 1
    table = [b""] * size
    for token_id, data in entries.items():
        table[token_id] = data
    specials = set(special_ids)
    if len(entries) < size:
        specials.update(i for i in range(size) if i not in entries)
    return LoadedVocab(name=name, token_bytes=table, special_ids=specials)
