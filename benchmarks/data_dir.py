"""Where the benchmarks' shared data lives (JSONSchemaBench, MaskBench, Lark grammars): outside
the repository, in ../shared/data beside a checkout. Installed (constrain.benchmarks), there is
no checkout to look beside: $CONSTRAIN_BENCH_DATA names the folder, else shared/data or
../shared/data is looked for from the working directory."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """The first of $CONSTRAIN_BENCH_DATA, <checkout>/../shared/data, ./shared/data and
    ../shared/data that exists (else the first of them: errors then name it)."""
    here = Path(__file__).resolve().parent
    candidates = [Path(os.environ["CONSTRAIN_BENCH_DATA"])] if os.environ.get("CONSTRAIN_BENCH_DATA") else []
    if (here.parent / "pyproject.toml").is_file():  # benchmarks/ of a checkout
        candidates.append(here.parents[1] / "shared" / "data")
    candidates += [Path.cwd() / "shared" / "data", Path.cwd().parent / "shared" / "data"]
    return next((p for p in candidates if p.is_dir()), candidates[0])
