"""Judging documents with the `jsonschema` library the way our grammar enforces them.

The grammar enforces the formats in formats.py and reports others as annotations (with the
message written by `unenforced_format_note`). A document that only fails such a format is
valid "as compiled"; tests and benchmarks use this to tell that apart from a real bug.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

_NOTE = "format {fmt!r} at {pointer} is not enforced"
_NOTE_RE = re.compile(r"format '([^']*)' at .* is not enforced")


def unenforced_format_note(fmt: str, pointer: str) -> str:
    return _NOTE.format(fmt=fmt, pointer=pointer)


def unenforced_formats(annotations: Iterable[str]) -> set[str]:
    return {m.group(1) for a in annotations if (m := _NOTE_RE.match(a))}


def valid_ignoring_unenforced_formats(schema: Any, data: Any, annotations: Iterable[str]) -> bool:
    """Valid for `jsonschema` once the formats the compile did not enforce are ignored (every
    other format it can check asserted)? False when nothing was unenforced or it cannot judge."""
    unenforced = unenforced_formats(annotations)
    if not unenforced:
        return False
    try:
        import jsonschema

        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        checker = jsonschema.FormatChecker(
            formats=[f for f in jsonschema.FormatChecker.checkers if f not in unenforced]
        )
        return cls(schema, format_checker=checker).is_valid(data)
    except Exception:  # a schema the library cannot handle: no excuse for us
        return False
