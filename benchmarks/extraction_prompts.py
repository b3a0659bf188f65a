"""Fifty extraction prompts with the values a reader would extract: five record types, ten texts
each. Typed functions must return a validated object for every one (the grammar guarantees the
shape); how often the values are also right is what a model's quality shows
(benchmarks/typed_extraction.py reports it)."""

from __future__ import annotations

import enum
from typing import Annotated, Literal, Optional

from pydantic import BaseModel, Field

try:
    from constrain import Regex
except ImportError:  # pragma: no cover - run from a checkout without the package
    Regex = None  # type: ignore[assignment]


Text = Annotated[str, Field(max_length=40)]  # bounded: a model that loops inside a string is cut off


class Person(BaseModel):
    name: Text
    age: int = Field(ge=0, le=150)


class Product(BaseModel):
    name: Text
    price: float = Field(ge=0, le=100000)
    in_stock: bool


class Unit(str, enum.Enum):
    celsius = "celsius"
    fahrenheit = "fahrenheit"


class Reading(BaseModel):
    city: Text
    temperature: int = Field(ge=-100, le=200)
    unit: Unit


class Meeting(BaseModel):
    topic: Text
    date: Annotated[str, Regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")]  # type: ignore[misc]
    attendees: int = Field(ge=1, le=1000)


class Review(BaseModel):
    product: Text
    sentiment: Literal["positive", "negative", "neutral"]
    stars: Optional[int] = Field(default=None, ge=1, le=5)


PERSONS = [
    ("Ada Lovelace, 36, was a mathematician.", {"name": "Ada Lovelace", "age": 36}),
    ("My neighbour Tom Baker just turned 52.", {"name": "Tom Baker", "age": 52}),
    ("Maria Lopez is 29 years old and lives in Madrid.", {"name": "Maria Lopez", "age": 29}),
    ("At 71, John Smith still runs every morning.", {"name": "John Smith", "age": 71}),
    ("Name: Priya Patel. Age: 24.", {"name": "Priya Patel", "age": 24}),
    ("Kenji Tanaka (45) is the new head chef.", {"name": "Kenji Tanaka", "age": 45}),
    ("The winner, Sarah Connor, is only 19.", {"name": "Sarah Connor", "age": 19}),
    ("Ahmed Khan celebrated his 60th birthday yesterday.", {"name": "Ahmed Khan", "age": 60}),
    ("Lena Fischer, aged 33, joined the team in May.", {"name": "Lena Fischer", "age": 33}),
    ("Our oldest member is Walter White, who is 88.", {"name": "Walter White", "age": 88}),
]

PRODUCTS = [
    ("The blue kettle costs $24.99 and is in stock.", {"name": "blue kettle", "price": 24.99, "in_stock": True}),
    ("Wireless mouse: 15.50 dollars, currently sold out.", {"name": "Wireless mouse", "price": 15.5, "in_stock": False}),
    ("We have the Desk Lamp available for 39.00.", {"name": "Desk Lamp", "price": 39.0, "in_stock": True}),
    ("Running shoes, price 89.95, out of stock until June.", {"name": "Running shoes", "price": 89.95, "in_stock": False}),
    ("A pack of pencils is 3.20 and there are plenty left.", {"name": "pencils", "price": 3.2, "in_stock": True}),
    ("The Coffee Grinder sells for 120 dollars; none left in the warehouse.", {"name": "Coffee Grinder", "price": 120.0, "in_stock": False}),
    ("Yoga mat - 25.00 - available now.", {"name": "Yoga mat", "price": 25.0, "in_stock": True}),
    ("The backpack is 59.99 but it is not available.", {"name": "backpack", "price": 59.99, "in_stock": False}),
    ("In stock: USB cable for 7.49.", {"name": "USB cable", "price": 7.49, "in_stock": True}),
    ("Headphones cost 199.00 and are sold out.", {"name": "Headphones", "price": 199.0, "in_stock": False}),
]

READINGS = [
    ("It is 21 degrees Celsius in Paris today.", {"city": "Paris", "temperature": 21, "unit": "celsius"}),
    ("Phoenix hit 105 degrees Fahrenheit this afternoon.", {"city": "Phoenix", "temperature": 105, "unit": "fahrenheit"}),
    ("Oslo: -5 °C this morning.", {"city": "Oslo", "temperature": -5, "unit": "celsius"}),
    ("The thermometer in Chicago read 32 F.", {"city": "Chicago", "temperature": 32, "unit": "fahrenheit"}),
    ("Tokyo is warm at 28 degrees Celsius.", {"city": "Tokyo", "temperature": 28, "unit": "celsius"}),
    ("Miami will reach 90 degrees Fahrenheit.", {"city": "Miami", "temperature": 90, "unit": "fahrenheit"}),
    ("In Berlin it is 12 degrees C.", {"city": "Berlin", "temperature": 12, "unit": "celsius"}),
    ("Denver dropped to 15 degrees Fahrenheit overnight.", {"city": "Denver", "temperature": 15, "unit": "fahrenheit"}),
    ("Cairo reports 35 degrees Celsius.", {"city": "Cairo", "temperature": 35, "unit": "celsius"}),
    ("Boston is at 50 Fahrenheit right now.", {"city": "Boston", "temperature": 50, "unit": "fahrenheit"}),
]

MEETINGS = [
    ("The budget review is on 2024-03-05 with 6 people.", {"topic": "budget review", "date": "2024-03-05", "attendees": 6}),
    ("Team offsite planning: 2025-01-20, 12 attendees.", {"topic": "offsite planning", "date": "2025-01-20", "attendees": 12}),
    ("We meet on 2024-11-02 to discuss hiring; 4 of us will attend.", {"topic": "hiring", "date": "2024-11-02", "attendees": 4}),
    ("Product launch sync on 2023-07-14 for 25 people.", {"topic": "Product launch sync", "date": "2023-07-14", "attendees": 25}),
    ("Security audit kickoff, 2024-09-09, attendees: 3.", {"topic": "Security audit kickoff", "date": "2024-09-09", "attendees": 3}),
    ("On 2025-05-30 eight engineers hold the design review.", {"topic": "design review", "date": "2025-05-30", "attendees": 8}),
    ("Quarterly sales meeting (2024-04-01), 40 participants.", {"topic": "Quarterly sales meeting", "date": "2024-04-01", "attendees": 40}),
    ("The board meets 2023-12-12; 9 members attend.", {"topic": "board meeting", "date": "2023-12-12", "attendees": 9}),
    ("Retrospective on 2024-06-21 with 7 developers.", {"topic": "Retrospective", "date": "2024-06-21", "attendees": 7}),
    ("Customer workshop, 15 guests, on 2025-02-11.", {"topic": "Customer workshop", "date": "2025-02-11", "attendees": 15}),
]

REVIEWS = [
    ("I love this blender, five stars!", {"product": "blender", "sentiment": "positive", "stars": 5}),
    ("The toaster broke after a week. 1 star.", {"product": "toaster", "sentiment": "negative", "stars": 1}),
    ("The phone case is okay, nothing special, 3 stars.", {"product": "phone case", "sentiment": "neutral", "stars": 3}),
    ("Great vacuum cleaner, works perfectly. 4 stars.", {"product": "vacuum cleaner", "sentiment": "positive", "stars": 4}),
    ("Terrible headphones, the sound is awful.", {"product": "headphones", "sentiment": "negative", "stars": None}),
    ("This notebook does the job. Rating: 3/5.", {"product": "notebook", "sentiment": "neutral", "stars": 3}),
    ("Best coffee maker I have ever owned, 5/5.", {"product": "coffee maker", "sentiment": "positive", "stars": 5}),
    ("The chair is uncomfortable and wobbly, 2 stars.", {"product": "chair", "sentiment": "negative", "stars": 2}),
    ("The lamp arrived on time and looks fine.", {"product": "lamp", "sentiment": "neutral", "stars": None}),
    ("Fantastic running shoes, very light! 5 stars.", {"product": "running shoes", "sentiment": "positive", "stars": 5}),
]

# (record type, instruction, [(text, expected fields)])
TASKS = [
    (Person, "Extract the person's name and age from this text: {text}", PERSONS),
    (Product, "Extract the product name, its price and whether it is in stock: {text}", PRODUCTS),
    (Reading, "Extract the city, the temperature and its unit: {text}", READINGS),
    (Meeting, "Extract the meeting topic, its date and the number of attendees: {text}", MEETINGS),
    (Review, "Extract the reviewed product, the sentiment and the star rating if given: {text}", REVIEWS),
]


def field_matches(expected: object, got: object) -> bool:
    """Loose value agreement: strings case-insensitively with the expected text inside the
    answer (or vice versa), numbers exactly, enums by value."""
    got = getattr(got, "value", got)
    if isinstance(expected, str) and isinstance(got, str):
        a, b = expected.lower().strip(), got.lower().strip()
        return bool(a) and bool(b) and (a in b or b in a)
    if isinstance(expected, float) or isinstance(got, float):
        return isinstance(got, (int, float)) and expected is not None and abs(float(got) - float(expected)) < 1e-6  # type: ignore[arg-type]
    return expected == got
