"""Requests for help lift the user's preferences (core/advice.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.advice import LIFT, asks_for_advice, lifted


def test_requests_for_help_are_told_from_questions_about_the_past() -> None:
    assert asks_for_advice("Can you help me plan my writing sessions for the upcoming week?")
    assert asks_for_advice("I'm planning my reading list. What should I read next?")
    assert asks_for_advice("Any tips for my first 10k run?")
    assert not asks_for_advice("What did you suggest for my writing sessions?")
    assert not asks_for_advice("Can you summarize how my project progressed?")
    assert not asks_for_advice("Where does my sister live?")
    assert not asks_for_advice("How many days between when Carla suggested it and the webinar?")
    assert asks_for_advice("Where do you think I should work on my essay?")


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_the_lift_stays_in_range_and_keeps_order(a: float, b: float) -> None:
    la, lb = lifted(a), lifted(b)
    assert 0.0 <= la <= 1.0 and la >= a
    if a < b:
        assert la <= lb
    assert lifted(1.0) == 1.0 and lifted(0.0) == LIFT
