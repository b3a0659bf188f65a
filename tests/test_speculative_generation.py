"""generate()'s `draft=` and `jump_forward=` resolve to the documented drafters, and bad values
are named."""

from __future__ import annotations

import pytest
from toy_speculation import ToyLM

from constrain.specdec import ForcedDrafter, ModelDrafter, NgramDrafter, TextLookupDrafter
from constrain.speculative_generation import resolve_drafters


def test_each_draft_option_resolves():
    assert resolve_drafters(None, False, None) == (None, None)
    drafter, forced = resolve_drafters(None, True, None)
    assert drafter is None and isinstance(forced, ForcedDrafter)
    assert resolve_drafters("forced", False, None)[0] is None
    assert isinstance(resolve_drafters("forced", False, None)[1], ForcedDrafter)
    assert isinstance(resolve_drafters("ngram", False, None)[0], NgramDrafter)
    assert isinstance(resolve_drafters("lookup", True, None)[0], TextLookupDrafter)
    mine = NgramDrafter(max_ngram=2)
    assert resolve_drafters(mine, False, None) == (mine, None)
    model_drafter, _ = resolve_drafters((ToyLM(salt=3), None), False, None)
    assert isinstance(model_drafter, ModelDrafter)


def test_bad_draft_values_are_named():
    with pytest.raises(ValueError, match="draft must be None, 'ngram'"):
        resolve_drafters("medusa", True, None)
    with pytest.raises(TypeError, match="got int"):
        resolve_drafters(3, True, None)
