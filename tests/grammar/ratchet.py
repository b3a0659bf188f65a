"""The ratchet of the JSON Schema tests: per case, the outcome category recorded in
json_schema_ratchet.json; a case may not get worse (see conftest.py). Loaded by conftest.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

UPDATE_ENV = "CONSTRAIN_UPDATE_RATCHET"
UPDATE_HINT = (
    f"if the change is intended, record it: {UPDATE_ENV}=1 .venv/bin/pytest -q tests/grammar "
    "(then review and commit tests/grammar/json_schema_ratchet.json)"
)


class Ratchet:
    env, hint = UPDATE_ENV, UPDATE_HINT

    def __init__(self, path: Path) -> None:
        self.path = path
        self.update = os.environ.get(UPDATE_ENV, "") not in ("", "0")
        if path.exists():
            doc = json.loads(path.read_text(encoding="utf-8"))
        else:
            doc = {}
        self.about = doc.get("_about", "")
        self.cases: dict[str, str] = doc.get("cases", {})
        self.known: dict[str, str] = doc.get("known_invalid_accepted", {})

    def write(self, stats: Any) -> list[str]:
        """Merge the session's outcomes in; drop entries of files that ran but no longer have
        that case; drop known failures that ran and are fixed. Returns notes to print."""
        notes = []
        cases = {
            k: v for k, v in self.cases.items() if k.split("#")[0] not in stats.file_keys or k in stats.outcomes
        }
        dropped = len(self.cases) - len(cases)
        cases.update(stats.outcomes)
        known = {}
        for k, reason in self.known.items():
            if k in stats.outcomes and stats.outcomes[k] != "invalid_accepted":
                notes.append(f"known_invalid_accepted {k} is fixed ({stats.outcomes[k]}): removed")
                continue
            known[k] = reason
        doc = {
            "_about": (
                "Ratchet of the JSON Schema tests (tests/grammar/conftest.py): per case id "
                "(<draft>/<file>#<group>/<test>, sample/..., bench/<subset>/<file>#<test>) the outcome "
                "category; a case may not get worse (ok > valid_rejected/unsupported/error:*/"
                "format_not_enforced > invalid_accepted/crash:*). Rewritten by CONSTRAIN_UPDATE_RATCHET=1; "
                "known_invalid_accepted (case id -> reason) is edited by hand only."
            ),
            "known_invalid_accepted": dict(sorted(known.items())),
            "cases": dict(sorted(cases.items())),
        }
        self.path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        notes.append(
            f"ratchet written: {self.path} ({len(cases)} cases, {len(stats.outcomes)} from this session, "
            f"{dropped} stale removed)"
        )
        return notes
