"""The JSON Schema benchmark's workload: JSONSchemaBench and MaskBench subsets, each schema with
its labelled test instances, chosen with a fixed seed (see jsonschema.py)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

if __package__:  # constrain.benchmarks, installed
    from .data_dir import data_dir
else:  # imported by name from a script in benchmarks/
    from data_dir import data_dir

DATA = data_dir()
SUBSETS = {  # subset -> folder of its files (with tests); JSONSchemaBench names its schema file
    **{s: "jsonschemabench-tests" for s in ("Github_trivial", "Github_easy", "Github_medium",
                                            "Glaiveai2K", "JsonSchemaStore")},
    **{s: "maskbench" for s in ("BFCL", "JME", "Synthesized")},
}
SEED = 20240601

@dataclass
class Item:
    subset: str
    name: str
    schema: Any
    tests: list[dict]


def load_subset(subset: str, limit: int) -> list[Item]:
    folder = DATA / SUBSETS[subset] / subset
    names = sorted(p.name for p in folder.glob("*.json"))
    random.Random(f"{SEED}:{subset}").shuffle(names)
    items = []
    for name in names:
        if limit and len(items) >= limit:
            break
        doc = json.loads((folder / name).read_text(encoding="utf-8"))
        if "schema" in doc:
            schema = doc["schema"]
        else:
            path = DATA / doc["schema_file"]
            if not path.exists():  # the 4 MiB cloudformation schema is not shipped
                continue
            schema = json.loads(path.read_text(encoding="utf-8"))
        items.append(Item(subset, name, schema, doc.get("tests") or []))
    return items


def serialize(data: Any) -> str:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: \u escapes
        text = json.dumps(data, separators=(",", ":"))
    return text
