"""marked_frames.py: marked frames of a stack."""

from __future__ import annotations

from constrain.index.marked_frames import MarkedFrames


def test_marked_frames_bottom_to_top():
    # A stack frame is (rule, state, parent, depth): rule 1 is marked.
    bottom = (1, 0, None, 0)
    middle = (2, 3, bottom, 1)
    top = (1, 5, middle, 2)
    frames = MarkedFrames([1])
    assert frames(top) == ((0, False), (2, True))
    assert frames(middle) == ((0, False),)
    assert frames(top) is frames(top)  # remembered
