"""Properties of the rule extractor over arbitrary and keyword-dense input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.core.extract.sentences import _last_word
from memstream.core.facts import CATEGORIES, KINDS, TurnView
from memstream.core.rule_extractor import extract_rules, resolve_dates

# Words that drive the rules (pronouns, date words, slot verbs, cue words), so generated
# text walks the interesting paths rather than only the "nothing here" one.
_VOCAB = (
    "I I'm I've I'll I'd i my me mine myself we we're our us you your you're Caroline Boston New York "
    "Python 3.11 Postgres rust React moved live lives work at for prefer over to than love hate favorite "
    "color is was am are have has had not don't no longer anymore actually decided will going to need "
    "remind call let's always never yesterday today tomorrow tonight last next this week weekend month year "
    "ago in on until since by before after Monday Friday May June 5 2020 12/25/2023 2023-02-30 1st 31st of "
    "the a an and but so because since? ! . , ; : ' \" ``` ? thanks hi ok name called sister dog's "
    "married vegan engineer years old 32 a couple of two twelve 9999 days weeks months years every"
)
_VOCAB_WORDS = _VOCAB.split()

_words = st.lists(st.sampled_from(_VOCAB_WORDS), max_size=25).map(" ".join)
_texts = st.one_of(st.text(max_size=200), _words, st.lists(_words, max_size=4).map(". ".join))
_zones = st.one_of(
    st.none(),
    st.just(UTC),
    st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m))),
)
_times = st.builds(
    lambda naive, tz: naive.replace(tzinfo=tz),
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59)),
    _zones,
)
_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789:-", min_size=1, max_size=12)


@st.composite
def turn_lists(draw: st.DrawFn) -> list[TurnView]:
    ids = draw(st.lists(_ids, min_size=0, max_size=5))
    return [
        TurnView(
            turn_id=turn_id,
            role=draw(st.sampled_from(["user", "user", "assistant", "system", "tool"])),
            speaker=draw(
                st.one_of(
                    st.sampled_from(["user", "Caroline", "mel", "assistant", ""]),
                    st.text(max_size=12),
                )
            ),
            text=draw(_texts),
            occurred_at=draw(_times),
        )
        for turn_id in ids
    ]


_settings = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(turn_lists())
def test_never_raises_and_facts_are_well_formed(turns: list[TurnView]) -> None:
    ids = {t.turn_id for t in turns}
    for fact in extract_rules(turns):
        assert fact.text.strip()
        assert fact.category in CATEGORIES and fact.category != "summary"
        assert fact.kind in KINDS
        assert 0.0 <= fact.confidence <= 1.0
        assert 0.0 <= fact.importance <= 1.0
        assert fact.source_turn_ids
        assert set(fact.source_turn_ids) <= ids
        assert len(set(fact.source_turn_ids)) == len(fact.source_turn_ids)


@_settings
@given(turn_lists())
def test_deterministic(turns: list[TurnView]) -> None:
    assert extract_rules(turns) == extract_rules(list(turns))


@_settings
@given(turn_lists())
def test_facts_of_a_turn_cite_that_turn(turns: list[TurnView]) -> None:
    # extraction is per turn, so each turn alone yields facts citing only itself
    for t in turns:
        for fact in extract_rules([t]):
            assert fact.source_turn_ids == (t.turn_id,)


@_settings
@given(_texts, _times)
def test_dates_resolve_in_the_event_zone(text: str, at: datetime) -> None:
    dated = resolve_dates(text, at)
    for bound in (dated.valid_from, dated.valid_until):
        if bound is not None:
            assert bound.tzinfo == at.tzinfo
            assert (bound.hour, bound.minute) == (0, 0)
    if dated.valid_from is not None and dated.valid_until is not None:
        assert dated.valid_from <= dated.valid_until


@_settings
@given(turn_lists())
def test_no_fact_without_an_alphanumeric_character(turns: list[TurnView]) -> None:
    for fact in extract_rules(turns):
        assert any(ch.isalnum() for ch in fact.text)


# Claims built to carry several dates with their prepositions, tasks among them ("I need to
# finalize the list by May 5 ... a game night on May 11" once made a task due before it
# started): whatever the combination, extraction never raises and bounds stay ordered.
_DATES = st.sampled_from(
    [
        "Friday",
        "next Monday",
        "May 5",
        "May 11",
        "8 March 2024",
        "2019",
        "last week",
        "tomorrow",
        "the weekend",
        "June",
    ]
)
_PREPS = st.sampled_from(["by", "on", "until", "since", "before", "after", "in", ""])
_OPENERS = st.sampled_from(
    ["I need to finish the report", "I will call Ana", "I moved to Porto", "We have a game night"]
)


@st.composite
def dated_claims(draw: st.DrawFn) -> str:
    parts = [draw(_OPENERS)]
    for _ in range(draw(st.integers(1, 3))):
        parts.append(f"{draw(_PREPS)} {draw(_DATES)}".strip())
        parts.append(draw(st.sampled_from([",", "and", "and the party is", "so", ""])))
    return " ".join(p for p in parts if p) + "."


@_settings
@given(st.lists(dated_claims(), min_size=1, max_size=3).map(" ".join), _times)
def test_claims_with_many_dates_never_raise_and_stay_ordered(text: str, at: datetime) -> None:
    turn = TurnView(turn_id="t1", role="user", speaker="user", text=text, occurred_at=at)
    for fact in extract_rules([turn]):
        if fact.valid_from is not None and fact.valid_until is not None:
            assert fact.valid_from <= fact.valid_until, (text, fact)


@given(
    st.text(alphabet=" \t\u00a0ab.'(", max_size=120),
    st.integers(0, 130),
    st.integers(0, 130),
)
def test_last_word_is_the_rsplit_of_the_slice(line: str, start: int, end: int) -> None:
    # the short window before ``end`` finds the same last word as the whole slice
    assert _last_word(line, start, end) == (line[start:end].rsplit(None, 1) or [""])[-1]
