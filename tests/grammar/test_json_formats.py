"""Enforced string formats (formats.py) are never wider than the jsonschema library's checkers
with its format extras (the oracle), and accept the common real spellings."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import jsonschema

from constrain.automata import regex_to_dfa
from constrain.grammar.json_schema.formats import FORMATS

CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER
checked = sorted(f for f in FORMATS if f in CHECKER.checkers and f != "email")  # (its check: any "@")

EXAMPLES = {
    "date": ["2024-02-29", "1999-12-31", "0001-01-01"],
    "date-time": ["2024-02-29T23:59:59Z", "2024-01-01t00:00:00.5+05:30"],
    "time": ["08:30:00Z", "23:59:59.999-01:00"],
    "hostname": ["example.com", "a-b.c-d.example.co.uk", "localhost", "x" * 63 + ".com"],
    "ipv6": ["::", "::1", "2001:db8::8a2e:370:7334", "fe80::1:2:3:4", "::ffff:192.0.2.128", "1:2:3:4:5:6:7:8"],
    "uri": ["https://example.com/a/b?x=1&y=%20#top", "mailto:a@b.org", "urn:isbn:0451450523", "http://[::1]:8080/", "file:///tmp/x"],
    "uri-reference": ["/a/b?c#d", "../x", "#frag", "", "//host/p", "https://example.com"],
    "duration": ["P1Y2M3DT4H5M6S", "PT20M", "P3W", "P1D", "PT1H"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000"],
    "ipv4": ["192.168.0.1", "0.0.0.0", "255.255.255.255"],
}
NOT = {
    "date": ["0000-01-01", "2023-02-29", "2024-13-01"],
    "hostname": ["-a.com", "a..b", "a" * 64, ".".join(["abcdefghij"] * 25)],
    "ipv6": [":::", "1:2:3:4:5:6:7:8:9", "12345::", "::1.02.3.4"],
    "uri": ["example.com", "http://exa mple.com", "1http://x"],
    "uri-reference": ["http://exa mple.com", "%zz"],
    "duration": ["P", "PT", "1D", "P1H"],
}


@pytest.mark.parametrize("fmt", checked)
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(data=st.data())
def test_every_string_of_a_format_passes_the_oracle(fmt, data):
    text = data.draw(st.from_regex(FORMATS[fmt], fullmatch=True))
    assert CHECKER.conforms(text, fmt), (fmt, text)


@pytest.mark.parametrize("fmt", sorted(EXAMPLES))
def test_real_spellings_are_accepted_and_bad_ones_refused(fmt):
    dfa = regex_to_dfa(FORMATS[fmt])
    for text in EXAMPLES[fmt]:
        assert CHECKER.conforms(text, fmt) and dfa.accepts(text.encode()), (fmt, text)
    for text in NOT.get(fmt, []):
        assert not dfa.accepts(text.encode()), (fmt, text)


def test_formats_under_long_length_bounds(json_compiler):
    """A bounded format makes a long maxLength redundant (still enforced); an unbounded one
    under it would need 65,537 counts times its states, so it is reported as not enforced."""
    date = json_compiler.compile_json_schema({"type": "string", "format": "date", "maxLength": 65536})
    assert date.accepts('"2024-02-29"') and not date.accepts('"2024-02-30"')
    uri = json_compiler.compile_json_schema({"type": "string", "format": "uri", "minLength": 1, "maxLength": 65536})
    assert any("'uri'" in a and "not enforced" in a for a in uri.annotations)
    assert uri.accepts('"https://example.com/x"') and not uri.accepts('""')
    assert not uri.accepts('"' + "a" * 65537 + '"')
