"""A schema the translator failed on, checked against its meta-schema for the error to raise.

The translator reads keyword values as the specification types them. A schema whose values have
other types (`"type": 0`, `"required": true`, `"minItems": "three"`) made it fail with a bare
TypeError or ValueError far from the cause (found by mutating real-world schemas). Such schemas
are rare and the meta-schema check costs milliseconds on a large one, so it runs only after a
failure: its error, with the JSON pointer of the place, becomes a SchemaError (the declared
draft's meta-schema first, then 2020-12's: the translator reads 2020-12 keywords such as
`prefixItems` in a draft-04 schema too). Where both accept the schema the failure is ours, and
it is raised as it is.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ...errors import SchemaError
from .keywords import escape_key

# What reading a keyword value of the wrong type raises inside the translator.
TRANSLATION_FAILURES = (TypeError, ValueError, AttributeError, KeyError, IndexError)


def malformed(schema: Any, documents: Mapping[str, Any]) -> Optional[SchemaError]:
    """The SchemaError naming where `schema` (or a resource document, by its URI) breaks its
    meta-schema; None where every one is well formed."""
    import jsonschema

    for uri, doc in (("", schema), *documents.items()):
        where = f" {uri}" if uri else ""
        if not isinstance(doc, (dict, bool)):
            return SchemaError(f"schema{where} must be an object or a boolean, not {type(doc).__name__}")
        declared = doc.get("$schema") if isinstance(doc, dict) else None
        drafts = [jsonschema.Draft202012Validator]  # (the translator reads its keywords in every draft)
        if isinstance(declared, str):
            drafts.insert(0, jsonschema.validators.validator_for({"$schema": declared}, default=drafts[0]))
        for cls in drafts:
            try:
                cls.check_schema(doc)
            except jsonschema.exceptions.SchemaError as err:
                pointer = "#" + "".join("/" + escape_key(str(p)) for p in err.absolute_path)
                return SchemaError(f"malformed schema{where}: {err.message}", pointer)
    return None
