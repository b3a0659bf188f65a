"""Which JSON Schema keywords are annotations, which we enforce, which we refuse; and the
internal keywords the translator writes into the schemas it derives (negations, merges)."""

from __future__ import annotations

ANNOTATIONS = {
    "title", "description", "default", "examples", "$comment", "$schema", "$id", "id", "deprecated",
    "readOnly", "writeOnly", "$anchor", "$defs", "definitions", "contentMediaType",
    "contentEncoding", "contentSchema", "$vocabulary", "$dynamicAnchor", "example", "discriminator",
    "nullable", "xml", "externalDocs",
}
# Keywords that combine whole schemas: expanded into alternatives of plain schemas (dnf.py).
APPLICATORS = (
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
    "dependencies",
)
# Keywords about what the rest of a schema did not evaluate: applied to each alternative.
UNEVALUATED = ("unevaluatedProperties", "unevaluatedItems")
ENFORCED = {
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "prefixItems", "additionalItems", "minItems", "maxItems", "$ref", "minLength", "maxLength",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "uniqueItems",
    "multipleOf", "patternProperties", "propertyNames", "minProperties", "maxProperties", "contains",
    "minContains", "maxContains", *APPLICATORS, *UNEVALUATED,
}
KNOWN_UNSUPPORTED = {"$dynamicRef", "$recursiveRef", "$recursiveAnchor"}
ALL_TYPES = ("object", "array", "string", "number", "boolean", "null")

# Internal keywords (tuples: never a key of a JSON document) that derived schemas carry.
NOT_ENUM = ("constrain", "not_enum")  # list: the value is none of these (JSON equality)
PATTERNS = ("constrain", "patterns")  # list: strings match every one of these `pattern`s
NOT_PATTERNS = ("constrain", "not_patterns")  # list: strings match none of these `pattern`s
NOT_FORMATS = ("constrain", "not_formats")  # list: strings match none of these (enforced) formats
NON_INTEGER = ("constrain", "non_integer")  # True: numbers with a non-zero fraction only
NOT_MULTIPLE_OF = ("constrain", "not_multiple_of")  # list: integers that are no multiple of these
# Markers for unevaluated*: which of `properties` only a derived schema (a complement, an
# "absent" encoding) put there, so they produce no annotation; and derived array keywords.
UNEVALUATED_NAMES = ("constrain", "unevaluated_names")  # list of property names
# (real prefix length, real rest, real contains): what of prefixItems/items/contains comes from
# the document rather than a complement (absent: all of it does).
REAL_ITEMS = ("constrain", "real_items")
NONE_REAL = (0, False, False)
DERIVED_OPEN = ("constrain", "derived_open")  # True: patternProperties/additionalProperties are
# Complements of additionalProperties: false: a list of (names, patterns), each meaning "some
# key outside these property names and patternProperties exists".
SOME_OTHER_KEY = ("constrain", "some_other_key")
# Dependencies that only speak of key presence, kept whole: a list of (key, presence-only
# schema), enforced by tracking those keys' presence in the object's automaton (presence.py).
KEY_RULES = ("constrain", "key_rules")
# Applicators over key-local schemas kept as boolean formulas (key_formula.py), evaluated by
# the object automaton member by member (key_conditions.py): a list of raw formulas, all hold.
KEY_FORMULA = ("constrain", "key_formula")
# Several `contains` met in a merge: a list of (schema, minContains, maxContains or None, real).
CONTAINS_ALL = ("constrain", "contains_all")
INTERNAL = (
    NOT_ENUM, PATTERNS, NOT_PATTERNS, NOT_FORMATS, NON_INTEGER, NOT_MULTIPLE_OF, UNEVALUATED_NAMES, REAL_ITEMS,
    DERIVED_OPEN, CONTAINS_ALL, SOME_OTHER_KEY, KEY_RULES, KEY_FORMULA,
)


def count_keyword(schema: dict, key: str, pointer: str, default: "int | None") -> "int | None":
    """A keyword whose value is a non-negative integer (minLength, maxItems, ...)."""
    from ...errors import SchemaError

    value = schema.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or not float(value).is_integer():
        raise SchemaError(f"{key} must be a non-negative integer", f"{pointer}/{key}")
    return int(value)


def escape_key(key: str) -> str:
    """A property name as a JSON pointer token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")
