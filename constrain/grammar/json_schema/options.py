"""Options of a JSON Schema compile (part of the cache key)."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class JsonSchemaOptions:
    whitespace: str = "compact"  # "compact" or "flexible" (bounded runs between tokens)
    property_order: str = "schema"  # "schema" or "any"
    additional_properties: str = "schema"  # "schema" (as JSON Schema says) or "forbid"
    strict: bool = True  # raise UnsupportedSchemaError rather than relax a keyword
    max_any_order_properties: int = 10  # property_order="any": a Graph of subsets (2^n states)
    # up to this many properties (if not too large), the matcher keeps the keys beyond (any_order.py)
    max_property_count: int = 100  # min/maxProperties are counted up to this
    max_item_states: int = 4096  # arrays with contains / uniqueItems: counter states
    integer_zero_fraction: bool = True  # "type": "integer" also admits 1.0, 1.00 (JSON Schema does)

    def __post_init__(self) -> None:
        for name, allowed in (
            ("whitespace", ("compact", "flexible")),
            ("property_order", ("schema", "any")),
            ("additional_properties", ("schema", "forbid")),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, not {value!r}")

    def key(self) -> dict:
        # (not dataclasses.asdict, which deep-copies every value: the fields are immutable)
        return {f.name: getattr(self, f.name) for f in fields(self)}
