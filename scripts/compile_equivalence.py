"""Record, per schema, what a compile decides, to compare two versions of constrain.

    python scripts/compile_equivalence.py OUT.json sample|store   # with the version under test first on PYTHONPATH
    python scripts/compile_equivalence.py --compare A.json B.json # exit 1 if any schema differs

Per schema: the compile outcome ("ok" or the error class; 120 s timeout), and for compiled ones
whether CompiledGrammar.accepts each test instance (serialized compactly, as the benchmark
does) and a hash of each of the first 30 masks along the first valid instance (Llama 3
tokenizer). `sample` is benchmarks/jsonschema.py's load_subset for all 8 subsets (limit 50);
`store` every JsonSchemaStore file of the JSONSchemaBench tests. Optimizations of the compile
must leave all of it unchanged.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import signal
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def compare(a_path: str, b_path: str) -> int:
    a, b = (json.loads(Path(p).read_text()) for p in (a_path, b_path))
    keys = sorted(set(a) | set(b))
    diff = [k for k in keys if a.get(k) != b.get(k)]
    print(f"{len(keys)} schemas;", dict(Counter(v["outcome"] for v in a.values())))
    print(f"instances {sum(len(v.get('accepts', [])) for v in a.values())}, masks {sum(len(v.get('masks', [])) for v in a.values())}")
    print(f"{len(diff)} differ")
    for k in diff[:40]:
        x, y = a.get(k) or {}, b.get(k) or {}
        what = [f for f in ("outcome", "accepts", "masks") if x.get(f) != y.get(f)]
        print(f"  {k}: {', '.join(what)}")
    return 1 if diff else 0


def record(out: str, which: str) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bench_js", ROOT / "benchmarks" / "jsonschema.py")
    bm = importlib.util.module_from_spec(spec)
    sys.modules["bench_js"] = bm
    spec.loader.exec_module(bm)
    import torch
    from transformers import PreTrainedTokenizerFast
    from engines import ConstrainEngine, tokenizer_dir

    tok = tokenizer_dir("llama3")
    eng = ConstrainEngine(tok)
    hf = PreTrainedTokenizerFast(tokenizer_file=str(tok / "tokenizer.json"))
    buf = torch.zeros((1, (eng.vocab.size + 31) // 32), dtype=torch.int32)

    class Timeout(Exception):
        pass

    def alarm(*_):
        raise Timeout()

    signal.signal(signal.SIGALRM, alarm)
    items = []
    if which == "sample":
        for sub in bm.SUBSETS:
            items += [(f"{sub}/{it.name}", it.schema, it.tests) for it in bm.load_subset(sub, 50)]
    else:
        for p in sorted((bm.DATA / "jsonschemabench-tests" / "JsonSchemaStore").glob("*.json")):
            doc = json.loads(p.read_text(encoding="utf-8"))
            path = bm.DATA / doc["schema_file"] if "schema_file" in doc else None
            if path is not None and not path.exists():
                continue
            schema = doc["schema"] if "schema" in doc else json.loads(path.read_text(encoding="utf-8"))
            items.append((f"store/{p.name}", schema, doc.get("tests") or []))

    res = {}
    t_start = time.time()
    for key, schema, tests in items:
        eng.clear()
        rec: dict = {}
        signal.setitimer(signal.ITIMER_REAL, 120)
        try:
            g = eng.compile_json_schema(schema)
            rec["outcome"] = "ok"
        except Timeout:
            rec["outcome"] = "timeout"
        except Exception as e:  # noqa: BLE001 - the error class is the outcome
            rec["outcome"] = type(e).__name__
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if rec["outcome"] == "ok":
            texts = [(bm.serialize(t["data"]), bool(t["valid"])) for t in tests]
            accepts = []
            for text, _ in texts:
                try:
                    accepts.append(bool(g.accepts(text.encode("utf-8", "surrogatepass"))))
                except Exception as e:  # noqa: BLE001
                    accepts.append(f"err {type(e).__name__}")
            rec["accepts"] = accepts
            walk = next((t for t, v in texts if v), None)
            masks: list = []
            if walk is not None:
                try:
                    m = eng.matcher(g)
                    for tid in [None] + hf.encode(walk, add_special_tokens=False):
                        if len(masks) >= 30:
                            break
                        if tid is not None and not m.accept_token(tid):
                            masks.append(f"rejected {tid}")
                            break
                        buf.zero_()
                        m.fill_next_token_bitmask(buf, 0)
                        masks.append(hashlib.sha1(buf.numpy().tobytes()).hexdigest()[:16])
                except Exception as e:  # noqa: BLE001
                    masks.append(f"err {type(e).__name__}")
            rec["masks"] = masks
        res[key] = rec
    Path(out).write_text(json.dumps(res, indent=0, sort_keys=True))
    print(f"{len(res)} schemas in {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    record(sys.argv[1], sys.argv[2])
