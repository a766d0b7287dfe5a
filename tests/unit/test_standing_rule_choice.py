"""Standing instructions: which memories are rules, their conditions, lookups, the choice."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.rescoring import with_rule
from memstream.core.standing_instructions import (
    MIN_MATCH,
    POSITION,
    Applicable,
    best_applicable,
    condition_of,
    is_lookup,
    preference_of,
)


def test_condition_of_a_rule() -> None:
    text = "Sam wants the assistant to always include version numbers when Sam asks about software libraries."
    assert condition_of(text) == "software libraries"
    never = "Sam wants the assistant to never suggest paid tools when Sam asks for software recommendations"
    assert condition_of(never) == "software recommendations"


def test_not_a_rule() -> None:
    assert condition_of("Sam prefers concise answers") is None
    assert condition_of("Sam wants to know how to draw a card when Sam asks about it") is None
    assert condition_of("Sam wants the assistant to always be kind") is None  # no condition


def test_preference_of() -> None:
    assert (
        preference_of("Sam prefers e-books for their portability")
        == "e-books for their portability"
    )
    assert preference_of("Sam wants to know how to draw a card") is None
    # one thing ranked above another is a preference too; a value alone is not
    assert (
        preference_of("User prioritized battery life over brand prestige in User's purchase")
        == "battery life over brand prestige in User's purchase"
    )
    assert preference_of("Maya values readability over speed") == "readability over speed"
    assert preference_of("User values honesty") is None


def test_lookups() -> None:
    assert is_lookup("What probability did I mention for drawing a card?")
    assert is_lookup("How many project cards do I have?")
    assert is_lookup("Which option did I say I chose?")
    assert not is_lookup("Which libraries are used in this project?")
    assert not is_lookup("How should I list the sources I used in my paper?")


def test_best_applicable_takes_the_closest_condition_over_the_floor() -> None:
    below = MIN_MATCH - 0.01
    rules = [("a", "books", below), ("b", "audiobooks", 0.7), ("c", "novels", 0.5)]
    assert best_applicable(rules) == Applicable("b", "audiobooks", 0.7)
    assert best_applicable([("a", "books", below)]) is None


scores = st.floats(min_value=-1, max_value=1, allow_nan=False)


@given(st.lists(st.tuples(st.text(min_size=1, max_size=3), st.text(max_size=5), scores)))
def test_best_applicable_is_at_least_the_floor_and_the_maximum(
    rules: list[tuple[str, str, float]],
) -> None:
    best = best_applicable(rules)
    over = [r for r in rules if r[2] >= MIN_MATCH]
    assert (best is None) == (not over)
    if best is not None:
        assert best.match == max(r[2] for r in over)


@given(
    st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10),
    st.sampled_from("abcdefghijz"),
    st.integers(min_value=1, max_value=10),
)
def test_with_rule_places_it_once_within_k_in_score_order(
    ids: list[str], rule_id: str, k: int
) -> None:
    answer = [(mid, 1.0 - i / 20, None) for i, mid in enumerate(ids)]
    out = with_rule(answer, Applicable(rule_id, "x", 0.5), k)
    got = [mid for mid, _s, _v in out]
    assert len(got) == len(set(got)) and len(got) <= k
    rest = [mid for mid in ids if mid != rule_id]
    if k > min(POSITION, len(rest)):  # room for it: it is within the first POSITION + 1
        assert rule_id in got[: POSITION + 1]
    assert all(out[i][1] >= out[i + 1][1] for i in range(len(out) - 1))
