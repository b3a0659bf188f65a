"""@constrain.function end to end on the embedded SmolLM2: every supported return type comes back
as a validated value of that type; batch, stream and the async forms agree with plain calls;
declaration errors name what is wrong."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import re
from typing import Annotated, Callable, Literal, Optional, Union

import pytest
from pydantic import BaseModel, Field, TypeAdapter
from typing_extensions import TypedDict

import constrain
from constrain import Grammar, OutputValidationError, Regex, TypedOutputError


class Person(BaseModel):
    name: str = Field(max_length=30)
    age: int = Field(ge=0, le=150)


@dataclasses.dataclass
class City:
    name: str
    population: int


class Book(TypedDict):
    title: str
    year: int


class Mood(enum.Enum):
    happy = "happy"
    sad = "sad"


class Contact(BaseModel):
    email: Annotated[str, Regex(r"[a-z]{1,12}@[a-z]{1,12}\.com")]


class Holder(BaseModel):
    fn: object = None
    cb: Callable[[int], int]  # no JSON Schema describes a function


ISO_DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"

CASES = [
    (Person, "Extract the person: {text}", "Ada Lovelace, 36, was a mathematician."),
    (City, "Give the city and its population: {text}", "Paris has about 2100000 inhabitants."),
    (Book, "Give the book's title and year: {text}", "Dune was published in 1965."),
    (Mood, "Is this text happy or sad? {text}", "I won the lottery today!"),
    (Literal["yes", "no"], "Answer yes or no: {text}", "Is the sky blue?"),
    (int, "Answer with a number: {text}", "How many days are in a week?"),
    (float, "Give the number as a decimal: {text}", "three and a half"),
    (bool, "Is this statement true? {text}", "Water is wet."),
    (Annotated[str, Field(max_length=20)], "Answer in one word: {text}", "What is the capital of France?"),
    (Annotated[list[int], Field(max_length=5)], "List the numbers in: {text}", "I have 3 cats, 2 dogs and 7 fish."),
    (Optional[int], "Give the age if stated, else null: {text}", "Tom is 12."),
    (Union[Annotated[int, Field(ge=0, le=100)], str], "Give the answer: {text}", "What is 2 + 2?"),
    (Contact, "Extract the email address: {text}", "Write to ada@math.com for details."),
    (Annotated[str, Regex(ISO_DATE)], "Give the date in ISO format: {text}", "The fifth of March 2024."),
]


def declare(tp, template, **options):
    def fn(text: str): ...

    fn.__doc__ = template
    fn.__annotations__["return"] = tp
    return constrain.function(max_new_tokens=48, **options)(fn)


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
@pytest.mark.parametrize("tp, template, text", CASES, ids=[getattr(c[0], "__name__", None) or repr(c[0])[:30] for c in CASES])
def test_every_return_type_comes_back_validated(tp, template, text, smollm2):
    result = declare(tp, template).result(text)
    base = tp.__origin__ if getattr(tp, "__metadata__", None) and any(isinstance(m, Regex) for m in tp.__metadata__) else tp
    if base is str:
        assert re.fullmatch(ISO_DATE, result.value)
    else:
        assert TypeAdapter(tp).validate_python(result.value, strict=False) == result.value
        if isinstance(tp, type) and tp not in (int, float, bool) and not issubclass(tp, dict):
            assert isinstance(result.value, tp)
    assert result.stats.stop_reason != "length"


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_grammar_return_type_gives_a_sentence_of_the_grammar(smollm2, lark_accepts):
    import lark

    @constrain.function(max_new_tokens=48)
    def query(question: str) -> Annotated[str, Grammar("sql")]:
        """Write an SQLite query for: {question}"""

    sql = query("the names of users older than 30 in table users")
    parser = lark.Lark(constrain.grammars.load("sql"), parser="earley", lexer="dynamic")
    assert lark_accepts(parser, sql), sql


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_batch_stream_and_async_agree_with_plain_calls(smollm2):
    @constrain.function(max_new_tokens=40)
    def extract(text: str) -> Person:
        """Extract the person described in this text: {text}"""

    texts = ["Ada Lovelace, 36, mathematician", "Alan Turing was 41 years old."]
    plain = [extract(t) for t in texts]
    assert all(isinstance(p, Person) for p in plain)
    batched = extract.batch(texts)
    assert all(isinstance(b, Person) for b in batched)
    # (a padded batch runs other kernels than one row, so values may differ in the last bits;
    # shapes are what the grammar guarantees)

    streamed = list(extract.stream(texts[0]))
    assert streamed[-1] == plain[0]
    partials = streamed[:-1]
    assert partials and all(isinstance(p, Person) for p in partials)
    seen_fields = [set(p.model_fields_set) for p in partials]
    assert all(a <= b for a, b in zip(seen_fields, seen_fields[1:])), seen_fields
    assert "name" in seen_fields[-1]

    async def run():
        one = await extract.acall(texts[0])
        many = await extract.abatch(texts)
        chunks = [c async for c in extract.astream(texts[1])]
        return one, many, chunks

    one, many, chunks = asyncio.run(run())
    assert one == plain[0] and len(many) == 2 and chunks[-1] == plain[1]


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_async_def_functions_return_coroutines(smollm2):
    @constrain.function(max_new_tokens=40)
    async def extract(text: str) -> Person:
        """Extract the person described in this text: {text}"""

    assert isinstance(asyncio.run(extract("Grace Hopper, 85")), Person)


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_a_cut_off_output_is_an_error_not_a_half_object(smollm2):
    @constrain.function(max_new_tokens=3)
    def extract(text: str) -> Person:
        """Extract the person described in this text: {text}"""

    with pytest.raises(OutputValidationError, match="max_new_tokens=3"):
        extract("Ada Lovelace, 36")
    rows = extract.batch(["Ada Lovelace, 36"], return_exceptions=True)
    assert isinstance(rows[0], OutputValidationError)


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_prompt_is_the_docstring_in_the_chat_template(smollm2):
    @constrain.function(output_hint="none", system="Be brief.")
    def extract(text: str, lang: str = "English") -> Person:
        """Extract the person ({lang}): {text}"""

    assert extract.prompt("Ada") == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Extract the person (English): Ada"},
    ]
    with pytest.raises(TypeError, match="extract"):
        extract.prompt()
    hinted = extract.with_options(output_hint="fields").prompt("Ada")
    assert hinted[-1]["content"].endswith("Answer with a JSON object with the fields name (string), age (integer).")
    assert '"properties"' in extract.with_options(output_hint="schema").prompt("Ada")[-1]["content"]


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_declared_in_a_class_it_is_a_method_bound_to_the_instance(smollm2):
    class Extractor:
        def __init__(self, kind: str) -> None:
            self.kind = kind

        @constrain.function(max_new_tokens=40, output_hint="none")
        def extract(self, text: str) -> Person:
            """Extract the {self.kind} described in this text: {text}"""

    ada, turing = Extractor("person"), Extractor("scientist")
    assert isinstance(Extractor.extract, constrain.TypedFunction)  # (read from the class: unbound)
    assert ada.extract.prompt("Ada")[-1]["content"] == "Extract the person described in this text: Ada"
    assert turing.extract.prompt("Ada")[-1]["content"] == "Extract the scientist described in this text: Ada"
    assert "bound to" in repr(ada.extract)
    assert ada.extract.with_options(temperature=0.5).prompt(text="x")[-1]["content"].endswith("person described in this text: x")
    assert ada.extract.grammar() is Extractor.extract.grammar()  # (compiled once per declaration)
    assert isinstance(ada.extract("Ada Lovelace, 36"), Person)
    assert all(isinstance(p, Person) for p in ada.extract.batch(["Ada Lovelace, 36"]))  # (one argument past self)
    with pytest.raises(TypeError, match="extract"):
        Extractor.extract.prompt("Ada")  # (unbound: self missing)


def test_declaration_errors_name_what_is_wrong():
    with pytest.raises(TypedOutputError, match="no return annotation"):
        @constrain.function
        def a(text: str):
            """{text}"""

    with pytest.raises(TypedOutputError, match="no docstring"):
        @constrain.function
        def b(text: str) -> int:
            pass

    with pytest.raises(TypedOutputError, match=r"names \{txt\}, which is not a parameter"):
        @constrain.function
        def c(text: str) -> int:
            """Count: {txt}"""

    with pytest.raises(TypedOutputError, match="c2: .*at Holder.cb"):
        @constrain.function
        def c2(text: str) -> list[Holder]:
            """{text}"""

    with pytest.raises(TypeError, match="temprature"):
        constrain.function(temprature=0.5)
    with pytest.raises(ValueError, match="temperature"):
        constrain.function(temperature=-1)
    with pytest.raises(ValueError, match="output_hint"):
        constrain.function(output_hint="json")
