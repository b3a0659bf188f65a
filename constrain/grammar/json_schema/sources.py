"""What users hand us as a schema, as a JSON Schema dict: a dict, JSON text, or a Python type
(Pydantic model, dataclass, TypedDict, or anything Pydantic's TypeAdapter accepts)."""

from __future__ import annotations

import json
from typing import Any

from ...errors import SchemaError


def schema_to_dict(schema: Any) -> dict[str, Any] | bool:
    if isinstance(schema, (dict, bool)):
        return schema
    if isinstance(schema, (str, bytes)):
        try:
            value = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"schema is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
        if not isinstance(value, (dict, bool)):
            raise SchemaError(f"a schema must be a JSON object or boolean, not {type(value).__name__}")
        return value
    try:
        from pydantic import BaseModel, TypeAdapter
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise SchemaError("Python types as schemas need pydantic") from exc
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    try:
        return TypeAdapter(schema).json_schema()
    except Exception as exc:  # pydantic raises several kinds for types it cannot describe
        raise SchemaError(f"cannot turn {schema!r} into a JSON Schema: {exc}") from None
