"""String formats enforced exactly (as regexes over the decoded characters).

`format` is only an annotation in JSON Schema unless a format checker is on; users who write
`"format": "date"` expect it enforced, so these are. Formats not listed here are not enforced
and are reported as annotations. Each is never wider than the `jsonschema` library's checker
with its format extras (the oracle): `date` knows month lengths, leap years and that there is no
year 0; `hostname` stays within 253 characters (narrower: see _HOSTNAME); `uri`/`uri-reference` follow RFC
3986's grammar, `ipv6` RFC 4291's text forms (as RFC 3986 writes them), `duration` RFC 3339's
appendix A.
"""

from __future__ import annotations


_YEAR = r"([0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"  # 0001..9999
_LEAP_YEAR = r"([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = (
    r"((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))"
)
DATE = rf"({_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
TIME = r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?([zZ]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"


def _labels(longest: int, fewest: int, most: int) -> str:
    label = rf"[A-Za-z0-9]([A-Za-z0-9-]{{0,{longest - 2}}}[A-Za-z0-9])?"
    return rf"{label}(\.{label}){{{fewest - 1},{most - 1}}}"


# At most 253 characters in all (the oracle's limit) without a length counter (a counter times
# the label counter is ~24,000 states): up to 3 labels of 63, 8 of 30 or 16 of 14 characters.
_HOSTNAME = f"({_labels(63, 1, 3)}|{_labels(30, 4, 8)}|{_labels(14, 9, 16)})"

# RFC 3986 appendix A
_HEX = "[0-9A-Fa-f]"
_H16 = _HEX + "{1,4}"
_LS32 = rf"({_H16}:{_H16}|{_OCTET}(\.{_OCTET}){{3}})"
_IPV6 = "(" + "|".join([
    rf"({_H16}:){{6}}{_LS32}",
    rf"::({_H16}:){{5}}{_LS32}",
    rf"({_H16})?::({_H16}:){{4}}{_LS32}",
    rf"(({_H16}:){{0,1}}{_H16})?::({_H16}:){{3}}{_LS32}",
    rf"(({_H16}:){{0,2}}{_H16})?::({_H16}:){{2}}{_LS32}",
    rf"(({_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
    rf"(({_H16}:){{0,4}}{_H16})?::{_LS32}",
    rf"(({_H16}:){{0,5}}{_H16})?::{_H16}",
    rf"(({_H16}:){{0,6}}{_H16})?::",
]) + ")"
_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = rf"%{_HEX}{_HEX}"
_PCHAR = rf"([{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_SEGMENT = rf"{_PCHAR}*"
_SEGMENT_NZ = rf"{_PCHAR}+"
_SEGMENT_NZ_NC = rf"([{_UNRESERVED}{_SUB_DELIMS}@]|{_PCT})+"
_IP_LITERAL = rf"\[({_IPV6}|v{_HEX}+\.[{_UNRESERVED}{_SUB_DELIMS}:]+)\]"
_REG_NAME = rf"([{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*"
_AUTHORITY = rf"(([{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?({_IP_LITERAL}|{_OCTET}(\.{_OCTET}){{3}}|{_REG_NAME})(:[0-9]*)?"
_PATH_ABEMPTY = rf"(/{_SEGMENT})*"
_PATH_ABSOLUTE = rf"/({_SEGMENT_NZ}(/{_SEGMENT})*)?"
_QUERY_FRAGMENT = rf"(\?({_PCHAR}|[/?])*)?(#({_PCHAR}|[/?])*)?"
_SCHEME = r"[A-Za-z][A-Za-z0-9+.\-]*"
_URI = rf"{_SCHEME}:(//{_AUTHORITY}{_PATH_ABEMPTY}|{_PATH_ABSOLUTE}|{_SEGMENT_NZ}(/{_SEGMENT})*)?{_QUERY_FRAGMENT}"
_RELATIVE_REF = rf"(//{_AUTHORITY}{_PATH_ABEMPTY}|{_PATH_ABSOLUTE}|{_SEGMENT_NZ_NC}(/{_SEGMENT})*)?{_QUERY_FRAGMENT}"

# RFC 3339 appendix A
_DUR_TIME = r"T([0-9]+H([0-9]+M([0-9]+S)?)?|[0-9]+M([0-9]+S)?|[0-9]+S)"
_DURATION = rf"P(([0-9]+D|[0-9]+M([0-9]+D)?|[0-9]+Y([0-9]+M([0-9]+D)?)?)({_DUR_TIME})?|{_DUR_TIME}|[0-9]+W)"

FORMATS: dict[str, str] = {
    "date": DATE,
    "time": TIME,
    "date-time": rf"{DATE}[Tt]{TIME}",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "ipv4": rf"{_OCTET}(\.{_OCTET}){{3}}",
    "hostname": _HOSTNAME,
    # A practical subset of RFC 5322 addresses (dot-atom local part, DNS domain): narrower than
    # the RFC, never wider, so every generated address is valid.
    "email": rf"[A-Za-z0-9!#$%&'*+/=?^_`{{|}}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{{|}}~-]+)*@{_LABEL}(\.{_LABEL})+",
    "ipv6": _IPV6,
    "uri": _URI,
    "uri-reference": rf"({_URI}|{_RELATIVE_REF})",
    "duration": _DURATION,
}
