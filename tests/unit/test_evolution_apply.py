"""Evolution's rule-based content and its trigger (core.evolution_apply): pure functions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.evolution_apply import (
    INDUCED_SLOT,
    Content,
    EvolutionTrigger,
    evolution_due,
    induced,
    merge_content,
    merge_groups,
    refined_text,
)
from memstream.core.lifecycle import clauses

T0 = datetime(2024, 3, 4, 9, tzinfo=UTC)
TRIGGER = EvolutionTrigger()


def test_due_after_six_hours_of_event_time_or_a_hundred_q_updates() -> None:
    assert evolution_due(None, 500, T0, TRIGGER) is None  # nothing remembered yet
    assert evolution_due(T0, 0, T0 + timedelta(hours=5, minutes=59), TRIGGER) is None
    assert evolution_due(T0, 0, T0 + timedelta(hours=6), TRIGGER) == "period"
    assert evolution_due(T0, 99, T0 + timedelta(hours=1), TRIGGER) is None
    assert evolution_due(T0, 100, T0 + timedelta(hours=1), TRIGGER) == "q_updates"
    off = EvolutionTrigger(every=None, q_updates=None)
    assert evolution_due(T0, 10**6, T0 + timedelta(days=999), off) is None


@given(st.integers(0, 300), st.integers(0, 10**6))
def test_due_is_a_function_of_state_and_event_time(q: int, minutes: int) -> None:
    at = T0 + timedelta(minutes=minutes)
    reason = evolution_due(T0, q, at, TRIGGER)
    assert reason == evolution_due(T0, q, at, TRIGGER)
    assert (reason is not None) == (q >= 100 or at - T0 >= timedelta(hours=6))


def test_merge_keeps_every_fact_turn_entity_and_metadata() -> None:
    a = Content("a", "Sam runs on Mondays.", ("Sam",), ("t1",), '{"urls": ["x"]}')
    b = Content("b", "Sam runs on Mondays. Sam swims on Fridays.", ("Sam", "pool"), ("t2", "t1"))
    c = Content("c", "Sam swims on Fridays.", (), ("t3",), '{"urls": ["y"], "ids": ["7"]}')
    m = merge_content([a, b, c])
    assert clauses(m.text) == ["Sam runs on Mondays", "Sam swims on Fridays"]
    assert m.source_turn_ids == ("t1", "t2", "t3")
    assert m.entities == ("Sam", "pool")
    assert m.metadata == {"urls": ["x", "y"], "ids": ["7"]}


@given(st.lists(st.lists(st.sampled_from("abcdefg"), max_size=4), min_size=1, max_size=5))
def test_merge_cites_every_members_turns(turns: list[list[str]]) -> None:
    members = [Content(f"m{i}", f"fact {i}.", (), tuple(t)) for i, t in enumerate(turns)]
    merged = merge_content(members)
    assert set(merged.source_turn_ids) == {t for ts in turns for t in ts}
    assert all(f"fact {i}" in merged.text for i in range(len(turns)))


def test_refine_rewrites_or_says_nothing() -> None:
    at = datetime(2024, 5, 2, 10, tzinfo=UTC)
    assert refined_text("Well, basically, Sam moved to Porto.", None, at) == "Sam moved to Porto."
    assert refined_text("She moved to Porto.", "Lena", at) == "Lena moved to Porto."
    assert refined_text("Sam ran 10k yesterday.", None, at) == "Sam ran 10k on 1 May 2024."
    assert refined_text("Sam moved to Porto.", "Sam", at) is None
    # the subject named later: "they" is someone else; a lower-case subject key is a name
    assert refined_text("They asked Tomas to lead the department.", "tomas", at) is None
    assert refined_text("She moved to Porto.", "lena", at) == "Lena moved to Porto."


def test_induce_needs_repeated_evidence_and_is_done_once() -> None:
    cases = [
        Content("a", "Run the smoke tests before a release.", (), ("t1",)),
        Content("b", "Run the smoke tests before each release.", (), ("t2",)),
        Content("c", "Always run the smoke tests before release.", (), ("t3",)),
    ]
    rule = induced(cases, [])
    assert rule is not None and rule.text.startswith("Seen 3 times: ")
    assert rule.source_turn_ids == ("t1", "t2", "t3")
    one_statement = [Content(c.memory_id, c.text, (), ("t1",)) for c in cases]
    assert induced(one_statement, []) is None  # said once, split up: not repeated
    done = Content("p", rule.text, (), rule.source_turn_ids, slot=INDUCED_SLOT)
    assert induced(cases, [done]) is None
    assert induced([*cases, done], []) is None


def test_merge_pairs_join_into_groups() -> None:
    assert merge_groups([("b", "c"), ("a", "b"), ("x", "y")]) == [["a", "b", "c"], ["x", "y"]]
