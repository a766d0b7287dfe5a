"""A question asking for a kind of thing, searched and lifted by the kind's instances
(core/answer_types.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.answer_types import instances_query


def test_the_kind_asked_for_is_followed_by_its_instances() -> None:
    searched = instances_query("Which language is Rosa learning?")
    assert searched is not None
    assert searched.startswith("Which language English Spanish")
    assert searched.endswith(" is Rosa learning?")
    assert instances_query("What kind of music does Lena like?") is not None
    assert instances_query("What instrument does Jules play?") is not None
    assert instances_query("Which food group does Rosa avoid?") is not None
    breed = instances_query("What breed is Lena's dog?")
    assert breed is not None and "beagle" in breed
    pets = instances_query("What pets does Lena have?")
    assert pets is not None and "puppy" in pets and "beagle" in pets


def test_the_verb_may_say_the_kind() -> None:
    drives = instances_query("What does Rosa drive now, and what did it replace?")
    assert (
        drives is not None
        and "Subaru" in drives
        and drives.endswith(" now, and what did it replace?")
    )
    plays = instances_query("What does Tomas play in his band?")
    assert plays is not None and "guitar" in plays and "tennis" in plays
    assert instances_query("What is Rosa doing now?") is None
    work = instances_query("Where does Lena work?")
    assert work is not None and "hospital" in work and work.endswith("?")
    assert instances_query("Where is Sam working now?") is not None
    assert instances_query("Where is the work party?") is None
    assert instances_query("Where does the work happen?") is None


def test_a_kind_after_the_person_is_asked_for() -> None:
    job = instances_query("What is Priya's profession?")
    assert job is not None and "teacher" in job and job.endswith("?")
    assert instances_query("What was Owen's job before?") is not None
    assert instances_query("What is the job market like?") is None
    assert instances_query("When did Marcus quit his job?") is None


def test_a_yes_or_no_question_may_ask_for_a_kind() -> None:
    pets = instances_query("Does Lena have any pets?")
    assert pets is not None and "dog" in pets and pets.endswith(" pets?") is False
    assert instances_query("Does he play an instrument?") is not None
    assert instances_query("Did she have a good time?") is None


def test_a_kind_not_asked_for_is_left_alone() -> None:
    assert instances_query("Where does Lena live?") is None
    assert instances_query("What is the language exchange about?") is None
    assert instances_query("Rosa's language class starts Monday") is None
    assert instances_query("How did the car trip go?") is None


@given(st.text(max_size=80))
def test_the_question_is_kept_whole(text: str) -> None:
    searched = instances_query(text)
    assert searched is None or (len(searched) > len(text) and searched.endswith(text[-5:]))


def test_everyday_kinds_of_tools_and_health_are_asked_for() -> None:
    """Tried as a new user would: "what medication am I on?" ranked "I take metformin for
    diabetes" third, "which editor do I use?" missed "I mostly code in Neovim"."""
    for question, instance in [
        ("What medication am I on?", "metformin"),
        ("What health conditions do I have?", "diabetes"),
        ("Which editor do I use?", "Neovim"),
        ("What phone do I use?", "Pixel"),
        ("Which password manager do I use?", "Bitwarden"),
        ("Which browser does Sam like?", "Firefox"),
    ]:
        searched = instances_query(question)
        assert searched is not None and instance in searched, question
