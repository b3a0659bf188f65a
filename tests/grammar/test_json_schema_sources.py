"""Schema sources: dicts, JSON text and Python types all become JSON Schema dicts."""

from __future__ import annotations

import dataclasses
import enum
from typing import Literal, Optional

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from constrain.errors import SchemaError
from constrain.grammar.json_schema.sources import schema_to_dict


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Item(BaseModel):
    name: str
    price: float
    color: Optional[Color] = None


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


def test_dicts_and_booleans_pass_through():
    schema = {"type": "integer"}
    assert schema_to_dict(schema) is schema
    assert schema_to_dict(True) is True


def test_json_text():
    assert schema_to_dict('{"type": "string", "maxLength": 3}') == {"type": "string", "maxLength": 3}
    with pytest.raises(SchemaError, match="not valid JSON.*line 1 column"):
        schema_to_dict('{"type": ')
    with pytest.raises(SchemaError, match="object or boolean"):
        schema_to_dict("[1, 2]")


@pytest.mark.parametrize(
    "source,expected_keys",
    [
        (Item, {"properties", "required", "type"}),
        (Point, {"properties", "required", "type"}),
        (Movie, {"properties", "required", "type"}),
        (list[Item], {"items", "type"}),
        (Literal["a", "b"], {"enum"}),
        (Color, {"enum"}),
    ],
)
def test_python_types(source, expected_keys):
    schema = schema_to_dict(source)
    assert expected_keys <= set(schema)


def test_objects_pydantic_cannot_describe():
    with pytest.raises(SchemaError, match="cannot turn"):
        schema_to_dict(object())
