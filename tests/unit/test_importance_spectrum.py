"""The importance spectrum: trivia below archival, facts mid, identity high, flashbulb top."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.core.extract.concrete import habitual
from memstream.core.extract.person import PAST_OR_FIXED
from memstream.core.extract.rules import extract_rules
from memstream.core.facts import Fact, TurnView
from memstream.core.importance import (
    FLASHBULB_FLOOR,
    IDENTITY,
    ORDINARY,
    TRIVIAL,
    Channels,
    band,
    spectrum,
)

AT = datetime(2024, 1, 1, 12, tzinfo=UTC)
ARCHIVE_BELOW = 0.3  # core.lifecycle.LifecycleConfig.archive_importance_below
TAG_BELOW = 0.5  # a weak memory the synaptic tagging may capture


def facts(text: str) -> list[Fact]:
    turn = TurnView(
        turn_id="t1", role="user", speaker="User", text=text, occurred_at=AT, session_id="s"
    )
    return extract_rules([turn])


def importance(text: str) -> float:
    found = facts(text)
    assert found, text
    return max(f.importance for f in found)


@pytest.mark.parametrize(
    "text",
    [
        "The weather was nice today.",
        "I had a sandwich for lunch.",
        "I went for a walk.",
        # a thought or a feeling of the moment is no habit
        "I think the line was long.",
        "I guess the line was long.",
        "I'm counting it as a win.",
        "I'm getting stuck.",  # a moment's mood, no pursuit named
    ],
)
def test_small_talk_and_trivia_fall_well_below_archival(text: str) -> None:
    assert importance(text) < ARCHIVE_BELOW - 0.05


def test_strong_words_about_the_weather_stay_trivial() -> None:
    # the scan reads "lovely" as arousal 0.7: still weather, still below archival
    assert importance("Lovely weather we're having, the sun is out.") < ARCHIVE_BELOW


@pytest.mark.parametrize(
    "text",
    [
        "My sister Ana lives in Porto.",
        "I met Tomas at the Lisbon marathon.",
        # a habit changed or a way of working: kept past the archival of trivia
        "I stopped drinking coffee.",
        "I work remotely from home.",
        # the body: a reaction or a condition, asked about long after
        "My eyes swell up around cats.",
        "I carry an inhaler for my asthma.",
    ],
)
def test_ordinary_named_facts_sit_mid(text: str) -> None:
    assert ARCHIVE_BELOW + 0.05 < importance(text) < 0.8


@pytest.mark.parametrize(
    "text",
    [
        "Actually, my name is Jonathan, not John.",
        "I work as a nurse at St Mary's hospital.",
        "I will renew my passport by March 8.",
        "I'm allergic to penicillin, please never forget that.",
    ],
)
def test_identity_commitments_and_corrections_are_high(text: str) -> None:
    assert importance(text) >= 0.7


def test_trivia_is_weak_and_identity_is_not() -> None:
    assert importance("I had a sandwich for lunch.") < TAG_BELOW
    assert importance("Actually, my name is Jonathan, not John.") >= TAG_BELOW


def test_flashbulb_arousal_tops_the_spectrum() -> None:
    top = spectrum("fact", Channels(arousal=0.85))
    assert top >= FLASHBULB_FLOOR
    assert top >= spectrum("correction", Channels(attention=0.3), has_slot=True)


def test_bands_by_what_the_claim_is() -> None:
    assert band("fact", has_slot=False, concrete=False) == TRIVIAL
    assert band("fact", has_slot=False, concrete=True) == ORDINARY
    assert band("fact", has_slot=True, concrete=False) == IDENTITY
    assert band("correction", has_slot=False, concrete=False) == IDENTITY


def test_channels_place_a_claim_inside_its_band() -> None:
    low = spectrum("fact", Channels(), concrete=True)
    high = spectrum("fact", Channels(novelty=0.9, reward=0.9), concrete=True)
    assert low == ORDINARY[0] and low < high <= ORDINARY[1]
    assert spectrum("fact", Channels(), emphasis=True) > spectrum("fact", Channels())


def test_out_of_range_channels_are_clamped() -> None:
    nan = float("nan")
    assert spectrum("fact", Channels(nan, -1.0, 2.0, nan)) == TRIVIAL[1]


@pytest.mark.parametrize(
    "text",
    [
        "Lena starts at the hospital on 13 May.",
        "I'm pregnant.",
        "Comet sleeps 20 hours a day.",
        "We move to Lisbon in March.",
        "Leo ate eleven pierogi at the fair.",
        # what someone does as a rule, what they eat, what they do for a living: asked
        # about long after, though they name nothing and carry no date
        "I have type 2 diabetes so I stay away from sugar.",
        "We grow our own tomatoes.",
        "I'm vegetarian.",
        "Says the architect who reads building codes for fun.",
        "She's on spring break from teaching music at the high school.",
        "So we have a whole week.",
        # a pursuit: what someone works on, tries, learns, struggles with or aims for
        "I'm having trouble debugging an issue with my resume analyzer project.",
        "My goal is to create a robust data model for the recommendations.",
        "I've been working on applying derivatives to find tangent lines.",
        "I'm kinda struggling to find a book club that fits my schedule.",
        "I'm not sure how to handle errors in an async context.",
        "i'm trying to fix the leak in my bike tyre.",  # a shouted turn, lowercased
    ],
)
def test_concrete_plain_facts_are_ordinary_not_trivia(text: str) -> None:
    assert importance(text) >= 0.4


def test_a_short_answer_is_concrete_by_its_question() -> None:
    said = [("Ana", "Is there a room for the baby?"), ("Bo", "Yes, yellow walls already.")]
    turns = [
        TurnView(
            turn_id=f"t{i}", role="user", speaker=who, text=text, occurred_at=AT, session_id="s"
        )
        for i, (who, text) in enumerate(said)
    ]
    found = [f for f in extract_rules(turns) if "t1" in f.source_turn_ids]
    assert found and max(f.importance for f in found) >= 0.4, found


_TAIL = st.lists(st.sampled_from(["the", "store", "sugar", "music", "a", "walk", "today"]))


@given(verb=st.sampled_from(sorted(PAST_OR_FIXED)), tail=_TAIL)
def test_a_past_or_a_modal_after_i_is_no_habit(verb: str, tail: list[str]) -> None:
    assert not habitual(" ".join(["I", verb, *tail]))


@given(verb=st.sampled_from(["stay", "teach", "grow", "run", "play", "volunteer"]), tail=_TAIL)
def test_a_present_verb_after_i_or_we_is_a_habit(verb: str, tail: list[str]) -> None:
    assert habitual(" ".join(["I", verb, *tail])) and habitual(" ".join(["We", verb, *tail]))


def test_a_subjectless_past_verb_is_no_name() -> None:
    """ "Cooked pasta tonight." was concrete: its first word, capitalised and in no common-word
    list, was taken for a name; an evening's pasta is trivia."""
    from memstream.core.extract.concrete import concrete as is_concrete
    from memstream.core.signals import scan

    said = "Cooked pasta tonight."
    found = scan(said)
    assert not is_concrete(
        False, False, "Maya", said, frozenset({"cooked", "pasta", "tonight"}), found
    )
    said = "Swimming is going better."
    assert is_concrete(False, False, "Maya", said, frozenset(), scan(said))
