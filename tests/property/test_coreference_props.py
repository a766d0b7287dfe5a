"""Properties of pronoun resolution: it never raises, and it never puts in a name (or any
word) the session did not hold, bar a few function words."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.core.calendar_words import MONTH_NAMES, WEEKDAYS
from memstream.core.extract.claims import display_name
from memstream.core.extract.coreference import Session, Where, resolve
from memstream.core.facts import TurnView
from memstream.core.rule_extractor import extract_rules

_VOCAB = (
    "he she it they this that these those his her its their him them He She It They This That "
    "These Those It's it's He's She's They're that's I I'm my me you your we our Lena Tomas Noor "
    "Biscuit Austin Fremont mom Dad grandmother sister brother dog puppy named called the a an "
    'truck job plan client recipe problems way idea "The Dune Series" go with start with '
    "stick with loves likes sounds seems like feels is was has had got moved lives works at in "
    "to from of on and but so Moved Loves Started Finished Does Did Would How's Who's What's "
    "important easier to that way This time ? ! . , yesterday last week"
)
_WORDS = _VOCAB.split()
_sentence = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=14).map(" ".join)
_texts = st.one_of(_sentence, st.lists(_sentence, max_size=3).map(". ".join), st.text(max_size=80))
_speakers = st.sampled_from(["Lena", "Tomas", "Noor", "user", "assistant", "the assistant", ""])
# Words resolution may put in that are in neither the claim nor the session.
_FUNCTION = frozenset(
    [
        "asked",  # a short answer's memory: 'Asked "...", Lena said: "..."'
        "the",
        "is",
        "are",
        "has",
        "have",
        "had",
        "would",
        "will",
        "i",
        "think",
        "find",
        "found",
        "feel",
        "it",
        "be",
        "what",
        "assistant",
        "suggested",
        "s",
    ]
)
_TOKEN = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_TOKEN.findall(text.lower()))


@st.composite
def sessions(draw: st.DrawFn) -> tuple[Session, list[str]]:
    session = Session(("Lena", "Tomas", "Noor"))
    turns = draw(
        st.lists(
            st.tuples(_speakers, st.lists(_texts, min_size=1, max_size=3)), min_size=1, max_size=5
        )
    )
    for speaker, sentences in turns:
        session.add_turn(speaker, sentences, context=draw(st.booleans()))
    return session, [s for _, ss in turns for s in ss] + [sp for sp, _ in turns]


_settings = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(sessions(), _texts, st.data(), st.booleans())
def test_resolution_never_raises_nor_invents(
    drawn: tuple[Session, list[str]], body: str, data: st.DataObject, after_assistant: bool
) -> None:
    session, said = drawn
    index = data.draw(st.integers(0, len(session.said) - 1))
    before = data.draw(st.sampled_from(["", session.said[index].text[:20]]))
    speaker = session.said[index].speaker
    out = resolve(body, session, Where(index, before), speaker, after_assistant=after_assistant)
    assert isinstance(out, str)
    allowed = _words(body) | _words(" ".join(said)) | _words(before) | _FUNCTION
    assert _words(out) <= allowed, _words(out) - allowed


# Dates are written out ("tomorrow" -> "on 9 May 2024"): their words are not names.
_ZONE_WORDS = frozenset(w.casefold() for w in (*MONTH_NAMES, *WEEKDAYS)) | frozenset(
    [
        "on",
        "in",
        "at",
        "by",
        "of",
        "the",
        "week",
        "weekend",
        "end",
        "before",
        "after",
        "until",
        "since",
        "from",
        "through",
    ]
)


@st.composite
def conversations(draw: st.DrawFn) -> list[TurnView]:
    n = draw(st.integers(1, 6))
    return [
        TurnView(
            turn_id=f"t{i}",
            role=draw(st.sampled_from(["user", "user", "assistant"])),
            speaker=draw(_speakers),
            text=draw(_texts),
            occurred_at=datetime(2024, 5, 8, tzinfo=UTC) + timedelta(minutes=i),
        )
        for i in range(n)
    ]


@_settings
@given(conversations())
def test_extracted_facts_name_no_one_the_session_did_not(turns: list[TurnView]) -> None:
    session_words = _words(" ".join(t.text for t in turns))
    names = {display_name(t).casefold() for t in turns} | {"user", "assistant", "others"}
    for fact in extract_rules(turns):
        for word in re.findall(r"\b[A-Z][a-z]+\b", fact.text):
            w = word.casefold()
            assert w in session_words or w in names or w in _ZONE_WORDS or w in _FUNCTION, (
                word,
                fact.text,
            )
