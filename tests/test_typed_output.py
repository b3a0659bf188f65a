"""Return types as grammars: every supported kind compiles, accepts Pydantic's own serialization
of values of the type (hypothesis draws the values) and parses back to them; types that cannot
become a grammar fail at declaration, naming the field."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Callable, Literal, Optional, Union

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter
from typing_extensions import TypedDict  # Pydantic needs it on Python < 3.12

from constrain import Compiler, Grammar, OutputValidationError, Regex, TypedOutputError
from constrain.typed_output import output_spec, schema_for_prompt


class Color(enum.Enum):
    red = "red"
    green = "green"


class Address(BaseModel):
    street: str
    zip: Annotated[str, Regex(r"[0-9]{5}")]


class Person(BaseModel):
    name: str = Field(max_length=12)
    age: int = Field(ge=0, le=130)
    address: Optional[Address] = None
    tags: list[str] = Field(default_factory=list, max_length=3)


@dataclasses.dataclass
class Point:
    x: int
    y: float


class Movie(TypedDict):
    title: str
    year: int


SHORT = Annotated[str, Field(max_length=4)]
JSON_TYPES: list[Any] = [
    Person, Point, Movie, Color, Literal["yes", "no"], int, float, bool, str, list[int],
    Optional[int], Union[int, str], dict[str, int], tuple[int, str], SHORT,
]
FINITE = st.floats(allow_nan=False, allow_infinity=False)  # JSON has no NaN or infinities
STRATEGIES: dict[Any, Any] = {
    Person: st.builds(
        Person, name=st.text("abc xyz", max_size=12), age=st.integers(0, 130),
        address=st.none() | st.builds(Address, street=st.text("ab ", max_size=5), zip=st.from_regex(r"\A[0-9]{5}\Z")),
        tags=st.lists(st.text("xy", max_size=3), max_size=3)),
    Point: st.builds(Point, x=st.integers(), y=FINITE),
    float: FINITE,
    SHORT: st.text(max_size=4),
}


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


@pytest.mark.parametrize("tp", JSON_TYPES, ids=lambda t: getattr(t, "__name__", repr(t)))
def test_json_types_round_trip_through_their_grammar(tp, compiler):
    spec = output_spec(tp)
    assert spec.kind == "json"
    grammar = spec.compile(compiler)
    adapter = TypeAdapter(tp)
    strategy = STRATEGIES[tp] if tp in STRATEGIES else st.from_type(tp)

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def round_trip(value):
        text = adapter.dump_json(adapter.validate_python(value)).decode()  # fields in declared order
        assert grammar.accepts(text), text
        assert spec.parse(text) == value

    round_trip()


def test_objects_are_closed_but_dict_fields_stay_open(compiler):
    spec = output_spec(Person)
    grammar = spec.compile(compiler)
    assert not grammar.accepts('{"name":"Ada","age":36,"nickname":"A"}')
    assert grammar.accepts('{"name":"Ada","age":36}')
    assert output_spec(dict[str, int]).compile(compiler).accepts('{"any":1,"keys":2}')


def test_schema_limits_are_enforced_by_the_grammar(compiler):
    grammar = output_spec(Person).compile(compiler)
    assert not grammar.accepts('{"name":"Ada","age":131}')
    assert not grammar.accepts('{"name":"Ada","age":3,"address":{"street":"x","zip":"1234"}}')
    assert grammar.accepts('{"name":"Ada","age":3,"address":{"street":"x","zip":"12345"}}')


def test_regex_and_grammar_return_types_are_bare_text(compiler):
    spec = output_spec(Annotated[str, Regex(r"[a-z]+@[a-z]+\.com")])
    assert spec.kind == "regex"
    assert spec.compile(compiler).accepts("ada@lovelace.com")
    assert spec.parse("ada@lovelace.com") == "ada@lovelace.com"
    sql = output_spec(Annotated[str, Grammar("sql")])
    assert sql.kind == "grammar"
    assert sql.compile(compiler).accepts("SELECT name FROM users WHERE age > 30;")


def test_grammar_accepts_lark_text_and_files(tmp_path, compiler):
    lark = 'start: "a"+ "b"'
    assert output_spec(Annotated[str, Grammar(lark)]).compile(compiler).accepts("aab")
    path = tmp_path / "ab.lark"
    path.write_text(lark)
    assert output_spec(Annotated[str, Grammar(str(path))]).compile(compiler).accepts("ab")


class Holder(BaseModel):
    callback: Callable[[int], int]


class Outer(BaseModel):
    inner: list[Holder]


class HasGrammar(BaseModel):
    query: Annotated[str, Grammar("sql")]


@pytest.mark.parametrize(
    "tp, message, where",
    [
        (Holder, "cannot become a JSON Schema", "Holder.callback"),
        (Outer, "cannot become a JSON Schema", "Holder.callback"),
        (HasGrammar, "not inside a structure", "HasGrammar.query"),
        (list[HasGrammar], "not inside a structure", "HasGrammar.query"),
        (Annotated[int, Regex("[0-9]+")], "annotate str", "return"),
        (Annotated[str, Regex("a"), Regex("b")], "one Regex or one Grammar", "return"),
        (Annotated[str, Grammar("no_such_grammar")], "neither a shipped grammar", ""),
        (Annotated[str, Grammar("missing.lark")], "does not exist", ""),
        (None, "return type is None", ""),
    ],
)
def test_types_that_cannot_become_grammars_fail_naming_the_field(tp, message, where):
    with pytest.raises(TypedOutputError, match=message) as info:
        output_spec(tp)
    assert info.value.where == where


class Unenforceable(BaseModel):
    code: str = Field(json_schema_extra={"pattern": r"(a)\1"})  # a backreference: no automaton enforces it


def test_a_schema_keyword_we_cannot_enforce_names_its_field():
    with pytest.raises(TypedOutputError, match="cannot be enforced") as info:
        output_spec(Unenforceable)
    assert info.value.where == "code"


def test_parse_failures_are_output_validation_errors():
    with pytest.raises(OutputValidationError, match="does not validate as Person"):
        output_spec(Person).parse('{"name":"Ada"}')


def test_partial_models_hold_the_fields_so_far():
    spec = output_spec(Person)
    partial = spec.partial({"name": "Ada", "unknown": 1})
    assert isinstance(partial, Person) and partial.name == "Ada" and "age" not in partial.model_fields_set


def test_schema_for_prompt_drops_titles_only():
    text = schema_for_prompt(output_spec(Person).schema)
    assert '"title"' not in text and '"name"' in text and '"additionalProperties":false' in text
    assert "title" in schema_for_prompt({"properties": {"title": {"type": "string"}}})


def test_integers_are_written_without_a_fraction(compiler):
    """JSON Schema counts 1.0 as an integer and the default compile follows it; typed outputs
    do not (a small model that starts "1." can write zeros until max_new_tokens)."""
    assert compiler.compile_json_schema({"type": "integer"}).accepts("1.0")
    typed = output_spec(int).compile(compiler)
    assert typed.accepts("1") and typed.accepts("-20") and not typed.accepts("1.0")
    assert not output_spec(Person).compile(compiler).accepts('{"name":"A","age":3.0}')


def test_fields_for_prompt_names_fields_and_types():
    from constrain.typed_output import fields_for_prompt

    assert fields_for_prompt(output_spec(Person).schema) == (
        "Answer with a JSON object with the fields name (string), age (integer), "
        "address (object with street (string), zip (string) or null), tags (list of string).")
    assert fields_for_prompt(output_spec(Color).schema) == 'Answer with a JSON one of "red"/"green".'
    assert fields_for_prompt(output_spec(list[int]).schema) == "Answer with a JSON list of integer."
