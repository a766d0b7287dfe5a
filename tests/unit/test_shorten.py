"""cut_at_word: texts cut to a length at a word boundary (core.shorten)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.shorten import cut_at_word


def test_a_fitting_text_is_kept_and_a_long_one_loses_its_cut_word() -> None:
    assert cut_at_word("two words", 9) == "two words"
    assert cut_at_word("two words here", 11, " …") == "two words …"
    assert cut_at_word("unbroken", 4) == "unbr"


@given(st.text(max_size=300), st.integers(min_value=1, max_value=200))
def test_the_cut_is_a_prefix_within_the_limit(text: str, limit: int) -> None:
    out = cut_at_word(text, limit)
    assert text.startswith(out) and len(out) <= limit
