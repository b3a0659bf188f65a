"""JSONSchemaBench and MaskBench schemas with their labelled instances (../shared/data).

Per subset at most CONSTRAIN_BENCH_SAMPLE (default 60) schemas that have instances, chosen with a
fixed seed (a larger sample extends a smaller one). Same rules as the suite: a compiled schema
never accepts an invalid instance (ratchet-listed known failures aside), and no case's category
gets worse than json_schema_ratchet.json records (ids "bench/<subset>/<file>#<test index>").

The labels are the datasets' (checked upstream by Python and Rust jsonschema validators); valid
instances are serialized compactly in their own key order, so a valid instance whose keys are
not in the schema's order counts as key_order (accepted with property_order="any"), not as an
error.
"""

from __future__ import annotations

import pytest


def test_bench_subset(bench_subset, shared_data, schema_harness, bench_sample_size):
    chosen = schema_harness.bench_schemas(bench_subset, bench_sample_size)
    if not chosen:
        pytest.skip(f"no schema with instances in {bench_subset}")
    outcomes = []
    for name, schema, tests in chosen:
        base = f"bench/{bench_subset}/{name}"
        result = schema_harness.run_group(schema, tests, lambda i, base=base: f"{base}#{i}", file_key=base)
        outcomes += result.outcomes
    schema_harness.check(f"bench/{bench_subset} ({len(chosen)} schemas)", outcomes)
