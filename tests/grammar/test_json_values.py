"""ValueChecker: values judged against schemas (jsonschema where the quick path abstains)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from constrain.grammar.json_schema.values import ValueChecker

VALUES = [None, True, False, 0, 1, -3, 1.5, 2.0, "a", "", [], [1], {}, {"a": 1}]
TYPES = ["null", "boolean", "string", "array", "object", "number", "integer", ["string", "null"],
         ["integer", "boolean"], "float"]
DRAFTS = ["http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-07/schema#",
          "https://json-schema.org/draft/2020-12/schema"]


@pytest.mark.parametrize("draft", DRAFTS)
def test_type_follows_the_draft(draft):
    """2.0 is an integer from draft 6 on, not in draft 4: the quick path defers there."""
    import jsonschema

    checker = ValueChecker({"$schema": draft})
    cls = jsonschema.validators.validator_for({"$schema": draft})
    for value in VALUES:
        for types in TYPES:
            if types == "float":
                with pytest.raises(Exception):
                    checker.valid(value, {"type": types})
                continue
            assert checker.valid(value, {"type": types}) == cls({"type": types}).is_valid(value), (value, types)


def test_refs_resolve_against_the_root():
    checker = ValueChecker({"$defs": {"small": {"maximum": 3}}})
    assert checker.valid(2, {"$ref": "#/$defs/small"})
    assert not checker.valid(4, {"$ref": "#/$defs/small"})


def test_simple_schemas_need_no_jsonschema_import(tmp_path):
    """Importing jsonschema costs most of a second: enum/const next to type must not need it."""
    code = (
        "import sys\n"
        "from constrain.grammar.json_schema.values import ValueChecker\n"
        "c = ValueChecker({})\n"
        "assert c.valid('a', {'type': 'string', 'enum': ['a', 'b'], 'description': 'd'})\n"
        "assert not c.valid(3, {'const': 1, 'standsFor': 'x'})\n"
        "assert 'jsonschema' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)  # (cwd: the installed package, not the source tree)
