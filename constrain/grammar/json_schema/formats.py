"""String formats enforced exactly (as regexes over the decoded characters).

`format` is only an annotation in JSON Schema unless a format checker is on; users who write
`"format": "date"` expect it enforced, so these are. Formats not listed here are not enforced
and are reported as annotations. `date` knows month lengths and leap years (no Feb 30).
"""

from __future__ import annotations

_YEAR = r"[0-9]{4}"
_LEAP_YEAR = r"([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)"
_MONTH_DAY = (
    r"((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))"
)
DATE = rf"({_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
TIME = r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?([zZ]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"

FORMATS: dict[str, str] = {
    "date": DATE,
    "time": TIME,
    "date-time": rf"{DATE}[Tt]{TIME}",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "ipv4": rf"{_OCTET}(\.{_OCTET}){{3}}",
    "hostname": rf"{_LABEL}(\.{_LABEL})*",
    # A practical subset of RFC 5322 addresses (dot-atom local part, DNS domain): narrower than
    # the RFC, never wider, so every generated address is valid.
    "email": rf"[A-Za-z0-9!#$%&'*+/=?^_`{{|}}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{{|}}~-]+)*@{_LABEL}(\.{_LABEL})+",
}
