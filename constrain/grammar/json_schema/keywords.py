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
ENFORCED = {
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "prefixItems", "additionalItems", "minItems", "maxItems", "$ref", "minLength", "maxLength",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "uniqueItems",
    "multipleOf", "patternProperties", "propertyNames", "minProperties", "maxProperties", "contains",
    "minContains", "maxContains", *APPLICATORS,
}
KNOWN_UNSUPPORTED = {
    "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef", "$recursiveAnchor",
}
ALL_TYPES = ("object", "array", "string", "number", "boolean", "null")

# Internal keywords (tuples: never a key of a JSON document) that derived schemas carry.
NOT_ENUM = ("constrain", "not_enum")  # list: the value is none of these (JSON equality)
PATTERNS = ("constrain", "patterns")  # list: strings match every one of these `pattern`s
NOT_PATTERNS = ("constrain", "not_patterns")  # list: strings match none of these `pattern`s
NOT_FORMATS = ("constrain", "not_formats")  # list: strings match none of these (enforced) formats
NON_INTEGER = ("constrain", "non_integer")  # True: numbers with a non-zero fraction only
NOT_MULTIPLE_OF = ("constrain", "not_multiple_of")  # list: integers that are no multiple of these
INTERNAL = (NOT_ENUM, PATTERNS, NOT_PATTERNS, NOT_FORMATS, NON_INTEGER, NOT_MULTIPLE_OF)


def escape_key(key: str) -> str:
    """A property name as a JSON pointer token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")
