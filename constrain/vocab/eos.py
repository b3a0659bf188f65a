"""Which ids end generation: configured eos ids plus the well-known end-of-turn specials.

Chat models stop on more than the single `eos_token_id` of their tokenizer
(Llama 3 instruct ends turns with <|eot_id|>, Qwen with <|im_end|>), and configs
often name only one of them, so we take the union of what the source configures
and the well-known stop tokens that exist in the vocabulary as special tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

WELL_KNOWN_EOS: tuple[str, ...] = (
    "<|eot_id|>",
    "<|end_of_text|>",
    "<|eom_id|>",
    "<|im_end|>",
    "<|endoftext|>",
    "</s>",
    "<｜end▁of▁sentence｜>",
    "<|end|>",
    "<end_of_turn>",
)

_WELL_KNOWN_BYTES = frozenset(text.encode("utf-8") for text in WELL_KNOWN_EOS)


def well_known_eos(token_bytes: Sequence[bytes], special_ids: Iterable[int]) -> set[int]:
    """Ids of special tokens whose content is one of WELL_KNOWN_EOS."""
    return {i for i in special_ids if token_bytes[i] in _WELL_KNOWN_BYTES}


def resolve_eos(
    token_bytes: Sequence[bytes], special_ids: Iterable[int], configured: Iterable[int]
) -> frozenset[int]:
    """Union of configured eos ids (those inside the vocabulary) and well-known stop specials.

    Configured ids outside the vocabulary are dropped: configs sometimes name ids
    of a wider model head that the tokenizer cannot produce.
    """
    size = len(token_bytes)
    found = {i for i in configured if 0 <= i < size}
    return frozenset(found | well_known_eos(token_bytes, special_ids))
