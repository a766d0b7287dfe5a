"""A quantity that changed supersedes the earlier number of the same measure
(core/new_value.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.new_value import RULE, new_amounts, new_value_proposals
from memstream.core.relations import Known, NewMemory


def _new(text: str) -> NewMemory:
    return NewMemory("new", text, "leo", ())


def test_the_wordings_of_a_move_give_the_new_amount_and_its_unit() -> None:
    assert new_amounts("Leo is down to one cup of coffee a day") == [("one", "cup")]
    assert new_amounts("The response time has recently improved to 250ms") == [("250", "ms")]
    assert new_amounts("Rent went up to $2,000 a month") == [("$2,000", "$")]
    assert new_amounts("Leo's accuracy is now rated 87% by HR") == [("87", "%")]
    # a limit, a date and no move at all are no new amount
    assert new_amounts("The pad absorbs impact forces up to 25%") == []
    assert new_amounts("Leo started on June 15 and it's now July 20") == []
    assert new_amounts("Leo drinks five cups of coffee a day") == []


def test_the_earlier_number_of_the_same_measure_is_superseded() -> None:
    earlier = [
        Known("a", "Leo has been drinking way too much coffee lately, like five cups a day", "leo"),
        Known("b", "Leo drinks two cups of water a day", "leo"),  # another measure
        Known("c", "Ana drinks four cups of coffee a day", "ana"),  # someone else's
        Known("d", "Leo bought one cup of coffee for Ana", "leo"),  # the same number
    ]
    (edge,) = new_value_proposals(_new("Leo is down to one cup of coffee a day"), earlier)
    assert (edge.source, edge.target, edge.relation, edge.rule) == (
        "new",
        "a",
        "supersedes",
        RULE,
    )
    assert edge.evidence == {"value": "one cup"}


def test_a_number_in_another_unit_or_about_another_thing_is_not_the_old_value() -> None:
    earlier = [
        Known("a", "Leo's grocery budget is $500 a month", "leo"),
        Known("b", "Leo's medical expenses are $350 a month", "leo"),
        Known("c", "Leo's grocery list has 12 items", "leo"),
    ]
    found = new_value_proposals(_new("Leo's grocery budget was increased to $550 a month"), earlier)
    assert [p.target for p in found] == ["a"]


def test_who_moved_a_measure_is_not_what_moved() -> None:
    """Tried as a new user would: "the landlord raised my rent to $1,400" left "rent is
    $1,200 a month" first; the clause's agent ("landlord") is not said by the old memory."""
    earlier = [
        Known("a", "Leo's rent is $1,200 a month", "leo"),
        Known("b", "Leo's landlord is Ana", "leo"),
    ]
    found = new_value_proposals(_new("The landlord raised Leo's rent to $1,400"), earlier)
    assert [(p.target, p.evidence) for p in found] == [("a", {"value": "$1,400"})]


def test_a_question_states_no_new_value() -> None:
    earlier = [Known("a", "Leo drinks five cups of coffee a day", "leo")]
    assert (
        new_value_proposals(_new("Should Leo get down to one cup of coffee a day?"), earlier) == []
    )


@given(st.text(max_size=80))
def test_any_text_gives_amounts_with_a_unit_and_never_fails(text: str) -> None:
    for num, unit in new_amounts(text):
        assert num and unit


def test_a_habit_said_as_it_has_been_lately_is_a_new_value() -> None:
    """Tried as a new user would: after "I've been sleeping eight hours a night since I cut
    caffeine", "how much do I sleep?" answered "six hours" first. The reason ("since ...")
    is not what moved."""
    earlier = [
        Known("a", "Leo sleeps about six hours a night", "leo"),
        Known("b", "Leo works eight hours a day", "leo"),
    ]
    new = _new("Leo has been sleeping eight hours a night since Leo cut caffeine")
    assert [(p.target, p.evidence) for p in new_value_proposals(new, earlier)] == [
        ("a", {"value": "eight hour"})
    ]
    assert new_amounts("Leo has been reading a lot") == []


def test_a_body_measure_moves_though_nothing_names_it() -> None:
    earlier = [
        Known("a", "Leo weighs 90 kg", "leo"),
        Known("b", "Leo's bag weighs 12 kg", "leo's bag"),
    ]
    found = new_value_proposals(_new("Leo is down to 82 kg after the diet"), earlier)
    assert [(p.target, p.evidence) for p in found] == [("a", {"value": "82 kg"})]
    # a unit that measures anything needs what it measures named
    assert (
        new_value_proposals(
            _new("Leo is down to 3 hours"), [Known("c", "Leo sleeps 6 hours", "leo")]
        )
        == []
    )
