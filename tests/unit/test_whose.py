"""Whose fact a question asks for, and which memories are a relative's (core/whose.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.whose import FACTOR, Asked, about_kin, asked_about, factor, holds_for


def test_the_person_a_question_asks_about() -> None:
    assert asked_about("Where do I live?") == Asked(None)
    assert asked_about("What pet do I have?") == Asked(None)
    assert asked_about("How old is my mom?") == Asked("mother")
    assert asked_about("Where does my older brother work?") == Asked("brother")
    assert asked_about("What does Amara's partner do for work?") == Asked("partner")
    assert asked_about("What does Amara's husband do?") == Asked("partner")
    assert asked_about("Where does Lena live?") is None  # a name: whose is not known


def test_a_memory_opening_with_a_relative_is_theirs() -> None:
    assert about_kin("Maya's sister lives in Berlin") == "sister"
    assert about_kin("Maya's friend Tom lives in Paris") == "friend"
    assert about_kin("Maya's best friend is Jordan") == "friend"
    assert about_kin("Maya lives in Lisbon") is None
    assert about_kin("Maya's cat is named Luna") is None  # a pet is the speaker's
    assert about_kin("Lena said her sister moved") is None


def test_scaled_only_when_it_is_someone_else_s() -> None:
    me, mom = Asked(None), Asked("mother")
    assert factor(me, "Maya's sister lives in Berlin") == FACTOR
    assert factor(me, "Maya lives in Lisbon") == 1.0
    assert factor(mom, "Maya's mom is 61") == 1.0
    assert factor(mom, "Maya's sister is 30") == FACTOR
    assert factor(mom, "Maya is 34 years old") == 1.0  # the speaker's words may be about her
    # the question names the relative: the memory naming them is what it asks about
    assert factor(me, "Maya's partner Douglas loves jazz", ("Douglas",)) == 1.0
    assert factor(None, "Maya's sister lives in Berlin") == 1.0
    assert holds_for(me, "Maya lives in Lisbon") and not holds_for(
        me, "Maya's sister lives in Rome"
    )
    assert holds_for(mom, "Maya's mother lives in Porto") and not holds_for(mom, "Maya is 34")


@given(st.text(max_size=80), st.text(max_size=80))
def test_a_factor_is_one_or_the_factor_and_never_fails(query: str, text: str) -> None:
    assert factor(asked_about(query), text) in (1.0, FACTOR)


def test_a_slot_holder_of_someone_else_named_is_not_lifted() -> None:
    """Tried as a new user would: "does Ana like her job at the bakery?" answered "Noor got a
    job teaching music" first, both holding a job."""
    from memstream.core.whose import about_named

    assert not about_named("Noor got a job teaching music", "noor", {"ana"})
    assert about_named("Ana loves the job at a bakery", "ana", {"ana"})
    assert about_named("Maya's husband Tom is a firefighter", "maya's husband", {"tom"})
    assert about_named("Lena moved to Ballard", "lena", {"lena"})
    assert about_named("Noor got a job", "noor", set())  # no name asked: anyone's
