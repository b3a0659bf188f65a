"""JSON-Schema-Test-Suite (draft2020-12 and draft7) through Compiler.compile_json_schema.

One test per keyword file. Every group's schema is compiled once (strict, compact, schema key
order) and each instance, serialized compactly, is judged with `CompiledGrammar.accepts`. The
hard rule: a schema that compiled never accepts an invalid instance (unless the ratchet lists
the case as a known failure with a reason). The ratchet (json_schema_ratchet.json) keeps every
case's category from getting worse; see tests/grammar/conftest.py.

The full suite lives in ../shared/data (skipped when absent); a small sample of it ships in
tests/grammar/data/json_schema_sample.json so CI always runs the same rules.
"""

from __future__ import annotations


def test_suite_file(suite_file, shared_data, schema_harness):
    groups = schema_harness.suite_groups(suite_file)
    outcomes = schema_harness.run_suite_file(suite_file, groups)
    schema_harness.check(suite_file, outcomes)


def test_shipped_sample(sample_groups, schema_harness):
    outcomes = []
    for group in sample_groups:
        source = group["source"]  # "<draft>/<file>#<group index>" in the upstream suite
        base = f"sample/{source}"
        result = schema_harness.run_group(
            group["schema"], group["tests"], lambda i, base=base: f"{base}/{i}",
            draft=group["draft"], file_key=f"sample/{source.split('#')[0]}",
        )
        outcomes += result.outcomes
    assert len(outcomes) > 100
    schema_harness.check("sample", outcomes)
