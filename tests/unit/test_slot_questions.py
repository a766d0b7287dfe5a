"""Questions that ask for a profile slot (core/slot_questions.py)."""

from __future__ import annotations

from memstream.core.slot_questions import asked_slots


def test_where_someone_lives_or_works_is_a_slot_question() -> None:
    assert asked_slots("Where does Lena live now?") == {"location"}
    assert asked_slots("Which city did Jules live in during June 2024?") == {"location"}
    assert asked_slots("What does Rosa's husband do for a living?") == {"employer", "job_title"}
    assert asked_slots("Where was Rosa working in July 2024?") == {"employer", "job_title"}
    assert asked_slots("What did Lena bake for her mother's birthday?") == frozenset()
    assert asked_slots("Where did we leave the keys?") == frozenset()


def test_when_a_birthday_is_or_how_old_someone_is_is_a_slot_question() -> None:
    assert asked_slots("When is Mia's birthday?") == {"birthday", "age"}
    assert asked_slots("What date is Leo's daughter's birthday?") == {"birthday", "age"}
    assert asked_slots("When was Mia born?") == {"birthday", "age"}
    assert asked_slots("How old is Mia?") == {"birthday", "age"}
    assert asked_slots("What did Lena bake for her mother's birthday?") == frozenset()


def test_where_someone_is_from_asks_for_the_origin() -> None:
    for question in ("Where am I from?", "Where did Owen grow up?", "What is Lena's hometown?"):
        assert asked_slots(question) == frozenset({"origin"}), question
    assert asked_slots("Where did I go from there?") == frozenset()
