"""A question about a group searched by its members too (core/group_words.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.group_words import members_query


def test_a_group_word_is_replaced_by_its_members() -> None:
    grouped = members_query("Tell me about Kim's family")
    assert grouped is not None and grouped.startswith("Tell me about Kim's husband wife")
    assert "sister" in grouped and "family" not in grouped
    kids = members_query("Does Leo have Kids?")
    assert kids == "Does Leo have son daughter kid child baby?"
    assert members_query("Where does Kim live?") is None
    assert members_query("What did the familiar voice say?") is None  # a word, not a part


@given(st.text(max_size=60))
def test_a_question_without_a_group_is_left_alone(text: str) -> None:
    grouped = members_query(text)
    assert grouped is None or grouped != text
