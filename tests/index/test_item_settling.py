"""item_settling.py: how far an open string item's text is known."""

from __future__ import annotations

from constrain.index.item_settling import open_string, settled_text


def test_settled_text():
    assert settled_text(b'"ab') == "ab"
    assert settled_text(b'"a\\n') == "a\n"
    assert settled_text(b'"a\\') is None  # inside an escape
    assert settled_text(b'"\xc3') is None  # inside a UTF-8 character
    assert settled_text(b"12") is None  # not a string


def test_open_string():
    assert open_string(b'"ab')
    assert not open_string(b'"ab"')
    assert not open_string(b"[1")
