"""Reference resolution helpers: the fast split of a `$ref` into resource and fragment is
urllib's own answer."""

from __future__ import annotations

import urllib.parse

import pytest

from constrain.grammar.json_schema.references import _join, _split

BASES = ["http://example.com/a/b.json", "HTTP://Example.com/x?", "urn:uuid:1234", "https://x.org/s#",
         "file:///tmp/s.json", "tag:x,2000:y", "http://x/a?q=1", "", "relative/path", "http://x/%7Efoo"]
REFS = ["#", "#/definitions/a", "#/definitions/a%20b", "#frag#more", "other.json#/x", "/abs#y", "?q#z", "#anchor"]


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("ref", REFS)
def test_split_is_urldefrag_of_the_joined_reference(base, ref):
    assert _split(base, ref) == tuple(urllib.parse.urldefrag(_join(base, ref)))
