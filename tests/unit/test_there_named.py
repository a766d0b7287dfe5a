"""A closing "there" names the place said before it (core/extract/there.py); a weekday that
comes back ("Thursday evenings") is not resolved to one date (core/extract/dates.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.core.extract.coreference import Session, Where
from memstream.core.extract.there import there_named
from tests.unit.test_coreference import said


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            ("Amara: We're driving to Halifax on October 20. Noor got a job at a school there.",),
            "Noor got a job at a school in Halifax",
        ),
        (("Sam: My brother moved to Denver.", "Sam: I might move there too."),
         "Sam might move to Denver too"),
        # the nearest place: the later of two in one sentence
        (("Sam: We flew from Lisbon to Porto. We rented a flat there.",),
         "Sam and others rented a flat in Porto"),
    ],
)  # fmt: skip
def test_there_is_the_place_said_before(lines: tuple[str, ...], expected: str) -> None:
    assert expected in said(*lines), said(*lines)


@pytest.mark.parametrize(
    ("lines", "kept"),
    [
        (("Sam: I'll be there at 5.",), "Sam will be there at 5"),  # no place said
        (("Sam: We moved to Denver. I put the box over there.",), "Sam put the box over there"),
        # a place two turns back is not what "there" means
        (("Sam: I grew up in Ohio.", "Ana: Nice.", "Sam: Cool.", "Ana: I work at a bakery there."),
         "Ana works at a bakery there"),
    ],
)  # fmt: skip
def test_there_stays_when_no_place_fits(lines: tuple[str, ...], kept: str) -> None:
    assert kept in said(*lines), said(*lines)


def test_a_weekday_that_comes_back_is_no_date() -> None:
    texts = said(
        "Lena: I signed up for a wheel-throwing class, Thursday evenings for ten weeks.",
        "Lena: Rosa starts tennis on Saturday mornings.",
        "Lena: I'm seeing the dentist on Thursday.",
    )
    assert "Lena signed up for a wheel-throwing class, Thursday evenings for ten weeks" in texts
    assert any("Saturday mornings" in t for t in texts), texts
    assert not any("Thursday" in t for t in texts if "dentist" in t), texts  # one day: a date


@given(st.text(max_size=80))
def test_any_claim_is_kept_or_ends_in_a_place(body: str) -> None:
    session = Session()
    session.add_turn("Sam", ["We moved to Denver.", body])
    out = there_named(body, session, Where(1))
    assert out == body or (out.startswith(body[: body.lower().rfind(" there")]) and "Denver" in out)


def test_there_reaches_the_speakers_turn_before_the_question_between() -> None:
    texts = said(
        "Owen: We were going to drive to Tucson on December 1 for the winter.",
        "Ana: Does that change your plans?",
        "Owen: We'll aim for February 20. Ruth's sister has a place there.",
    )
    assert "Ruth's sister has a place in Tucson" in texts, texts


def test_a_fragment_without_a_tense_is_dated_as_its_turn() -> None:
    """Tried as a new user would: "I finished! 2 hours 41 minutes in Boulder on Sunday."
    dated the race the Sunday ahead (the fragment has no past tense of its own) while the
    quoted answer dated it the Sunday before."""
    texts = said(  # T0 is Wednesday 8 May 2024
        "Felix: I finished! 2 hours 41 minutes in Boulder on Sunday.",
        "Felix: Big race coming up. 10k in Denver on Sunday.",
    )
    assert "2 hours 41 minutes in Boulder on 5 May 2024" in texts, texts
    assert "10k in Denver on 12 May 2024" in texts, texts


def test_the_in_of_moved_in_is_no_preposition_of_the_date() -> None:
    texts = said("Sam: We bought a house in Richmond and moved in last weekend.")
    assert any("moved in on the weekend of 4 May 2024" in t for t in texts), texts
