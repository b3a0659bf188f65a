"""Which JSON Schema keywords are annotations, which we enforce, which we refuse."""

from __future__ import annotations

ANNOTATIONS = {
    "title", "description", "default", "examples", "$comment", "$schema", "$id", "id", "deprecated",
    "readOnly", "writeOnly", "$anchor", "$defs", "definitions", "contentMediaType",
    "contentEncoding", "contentSchema", "$vocabulary", "$dynamicAnchor", "example", "discriminator",
    "nullable", "xml", "externalDocs",
}
ENFORCED = {
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "prefixItems", "additionalItems", "minItems", "maxItems", "anyOf", "oneOf", "allOf", "$ref",
    "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "uniqueItems", "multipleOf", "not", "patternProperties",
}
KNOWN_UNSUPPORTED = {
    "if", "then", "else", "propertyNames", "dependencies",
    "dependentRequired", "dependentSchemas", "unevaluatedProperties", "unevaluatedItems",
    "contains", "minContains", "maxContains", "minProperties", "maxProperties",
    "$dynamicRef", "$recursiveRef", "$recursiveAnchor",
}
ALL_TYPES = ("object", "array", "string", "number", "boolean", "null")


def escape_key(key: str) -> str:
    """A property name as a JSON pointer token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")
