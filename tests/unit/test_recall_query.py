"""Recall query rules: the pre-retrieval gate, intent, named times, decomposition, RRF."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest

from memstream.core.decompose import MAX_PARTS, decompose, rrf_merge
from memstream.core.intent import PROFILES, classify, with_time_match
from memstream.core.query_time import TimeRef, parse_time
from memstream.core.recall_gate import should_retrieve

NOW = datetime(2024, 3, 15, 12, tzinfo=UTC)  # a Friday


def _day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


# --- gate --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("hi", "trivial"),
        ("Hello there!", "trivial"),
        ("ok", "trivial"),
        ("ok thanks", "trivial"),
        ("thank you so much", "trivial"),
        ("sounds good", "trivial"),
        ("/help", "slash_command"),
        ("/reset now", "slash_command"),
        ("??", "trivial"),
        ("x", "too_short"),
    ],
)
def test_gate_skips_chit_chat(query: str, reason: str) -> None:
    result = should_retrieve(query)
    assert not result.retrieve and result.reason == reason


@pytest.mark.parametrize(
    "query",
    [
        "Where does Ana live?",
        "hi, what is my dentist's name?",
        "ok so what did we decide about the database",
        "/usr/bin/python keeps crashing, what did I change?",
        "def f(x):\n    return x  # why did we write this?",
    ],
)
def test_gate_retrieves_real_questions(query: str) -> None:
    assert should_retrieve(query).retrieve
    assert should_retrieve(query).reason == "query"


# --- intent ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("Where does Ana live?", "factual"),
        ("How many cats does Bob have?", "factual"),
        ("Who is my dentist?", "factual"),
        ("When did Ana move to Lisbon?", "temporal"),
        ("Where did I live in 2021?", "temporal"),
        ("Where did I used to work?", "temporal"),
        ("What did I eat yesterday?", "temporal"),
        ("Why did Bob quit?", "causal"),
        ("What was the reason the launch slipped?", "causal"),
        ("Who is Ana Silva?", "entity_profile"),
        ("Tell me about Lisbon", "entity_profile"),
        ("What do you know about Bob?", "entity_profile"),
        ("What coffee do I like?", "preference"),
        ("Which editor do I prefer?", "preference"),
        ("What is my favourite band?", "preference"),
        ("coffee order", "general"),
        ("remind me of the plan", "general"),
    ],
)
def test_classify_kinds(query: str, kind: str) -> None:
    intent = classify(query, NOW)
    assert intent.kind == kind
    assert intent.profile == (
        PROFILES[intent.kind] if intent.time is None else with_time_match(PROFILES[intent.kind])
    )
    assert intent.cues or kind == "general"


def test_temporal_cues_include_superseded_whatever_the_kind() -> None:
    assert classify("When did Ana move?").include_superseded
    assert classify("Where did I used to live?").include_superseded
    why = classify("Why did I leave Lisbon last year?", NOW)
    assert why.kind == "causal" and why.include_superseded
    assert why.time is not None and why.time.start == _day(2023, 1, 1)
    assert not classify("Where does Ana live?").include_superseded


def test_intent_carries_point_in_time_and_entities() -> None:
    intent = classify("Where did Ana live in March 2022?", NOW)
    assert intent.time == TimeRef(_day(2022, 3, 1), _day(2022, 4, 1), "during", "March 2022")
    assert intent.at == datetime(2022, 3, 16, 12, tzinfo=UTC)  # the middle of the month
    assert intent.entities == ("Ana",)
    # a span reaching past now is asked about as of now
    assert classify("What did I do this month?", NOW).at == NOW
    assert classify("What did I do this month?").at is None  # relative needs a reference


def test_profiles_differ_where_the_intent_needs_it() -> None:
    assert PROFILES["temporal"].validity > PROFILES["general"].validity
    assert PROFILES["temporal"].retention < PROFILES["general"].retention
    assert PROFILES["entity_profile"].entity > PROFILES["factual"].entity
    assert PROFILES["temporal"].limit > PROFILES["factual"].limit
    with pytest.raises(ValueError):
        replace(PROFILES["general"], limit=0)
    with pytest.raises(ValueError):
        replace(PROFILES["general"], relevance=math.nan)


# --- named times -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "start", "end", "relation"),
    [
        ("on 2023-05-02", _day(2023, 5, 2), _day(2023, 5, 3), "during"),
        ("in 2023-05", _day(2023, 5, 1), _day(2023, 6, 1), "during"),
        ("in March", _day(2024, 3, 1), _day(2024, 4, 1), "during"),
        ("in April", _day(2023, 4, 1), _day(2023, 5, 1), "during"),  # latest April so far
        ("March 5th, 2022", _day(2022, 3, 5), _day(2022, 3, 6), "during"),
        ("the 5th of June", _day(2023, 6, 5), _day(2023, 6, 6), "during"),
        ("Sep 2023", _day(2023, 9, 1), _day(2023, 10, 1), "during"),
        ("before May 2023", _day(2023, 5, 1), _day(2023, 6, 1), "before"),
        ("what happened in May", _day(2023, 5, 1), _day(2023, 6, 1), "during"),
        ("after 2020", _day(2020, 1, 1), _day(2021, 1, 1), "after"),
        ("since last month", _day(2024, 2, 1), _day(2024, 3, 1), "since"),
        ("yesterday", _day(2024, 3, 14), _day(2024, 3, 15), "during"),
        ("today", _day(2024, 3, 15), _day(2024, 3, 16), "during"),
        ("last week", _day(2024, 3, 4), _day(2024, 3, 11), "during"),
        ("last year", _day(2023, 1, 1), _day(2024, 1, 1), "during"),
        ("on Friday", _day(2024, 3, 8), _day(2024, 3, 9), "during"),  # not today
        ("last Monday", _day(2024, 3, 11), _day(2024, 3, 12), "during"),
        ("3 days ago", _day(2024, 3, 12), _day(2024, 3, 13), "during"),
        ("two months ago", _day(2024, 1, 1), _day(2024, 2, 1), "during"),
        ("a year ago", _day(2023, 1, 1), _day(2024, 1, 1), "during"),
    ],
)
def test_parse_time(query: str, start: datetime, end: datetime, relation: str) -> None:
    ref = parse_time(query, NOW)
    assert ref is not None
    assert (ref.start, ref.end, ref.relation) == (start, end, relation)


@pytest.mark.parametrize(
    "query", ["May I ask something", "what may help", "sep", "3/5", "I marched", "Feb 30"]
)
def test_parse_time_leaves_non_dates_alone(query: str) -> None:
    assert parse_time(query, NOW) is None


def test_numeric_dates_count_for_their_year_only() -> None:
    ref = parse_time("on 3/5/2023", NOW)  # day-first and month-first readings disagree
    assert ref is not None and (ref.start, ref.end) == (_day(2023, 1, 1), _day(2024, 1, 1))


def test_parse_time_needs_now_for_relative_but_not_absolute() -> None:
    assert parse_time("in March") is None and parse_time("yesterday") is None
    ref = parse_time("in 2021-07-04")
    assert ref is not None and ref.start == _day(2021, 7, 4)


def test_time_ref_points_and_timezone() -> None:
    ref = TimeRef(_day(2024, 1, 1), _day(2024, 1, 3), "during", "x")
    assert ref.at == _day(2024, 1, 2)
    assert TimeRef(ref.start, ref.end, "after", "x").at == ref.end
    assert TimeRef(ref.start, ref.end, "since", "x").at == ref.start
    assert TimeRef(ref.start, ref.end, "before", "x").at < ref.start
    tz = timezone(timedelta(hours=-5))
    local = parse_time("yesterday", datetime(2024, 3, 15, 1, tzinfo=tz))
    assert local is not None and local.start == datetime(2024, 3, 14, tzinfo=tz)


# --- decomposition and fusion ------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        ("Where does Ana live and what does she do?", ["Where does Ana live", "what does Ana do?"]),
        ("Where does Ana live? What is her job?", ["Where does Ana live?", "What is Ana's job?"]),
        (
            "When did I meet Bob, and why did he leave?",
            ["When did I meet Bob", "why did Bob leave?"],
        ),
        ("Where is Ana and where is Bob?", ["Where is Ana", "where is Bob?"]),
        ("What do Ana and Bob like?", ["What do Ana and Bob like?"]),
        ("Where does Ana live and work?", ["Where does Ana live and work?"]),
        ("When and where did we meet?", ["When and where did we meet?"]),
        ("  Where is my car?  ", ["Where is my car?"]),
        ("What is X? what is x?", ["What is X?"]),
        ("", []),
    ],
)
def test_decompose(query: str, parts: list[str]) -> None:
    assert decompose(query) == parts


def test_decompose_caps_the_fan_out() -> None:
    query = " ".join(f"What is item {i}?" for i in range(10))
    assert len(decompose(query)) == MAX_PARTS


def test_rrf_merge_sums_reciprocal_ranks() -> None:
    merged = rrf_merge([["a", "b", "c"], ["c", "a"]])
    assert [m for m, _ in merged] == ["a", "c", "b"]
    assert dict(merged)["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert dict(merged)["b"] == pytest.approx(1 / 62)
    assert rrf_merge([["a", "a"]]) == [("a", 1 / 61)]  # a repeat counts once
    assert rrf_merge([]) == []
    assert rrf_merge([["x"]], k=0) == [("x", 1.0)]


def test_rrf_merge_ties_go_to_best_rank_then_id() -> None:
    merged = rrf_merge([["b", "a"], ["a", "b"], ["d"], ["c"]])
    assert [m for m, _ in merged] == ["a", "b", "c", "d"]
    # k=0: x at ranks 2 and 2 sums to 1.0 like y and z at rank 1; the better single rank wins
    merged = rrf_merge([["y", "x"], ["z", "x"]], k=0)
    assert merged == [("y", 1.0), ("z", 1.0), ("x", 1.0)]


def test_coverage_is_the_share_of_content_words_found() -> None:
    from memstream.core.recall_gate import coverage

    assert coverage("Where does Ana live?", ["Ana lives in Porto"]) == 1.0  # stems match
    assert coverage("What kind of dog did Lena adopt?", ["Lena likes tea"]) == 0.25
    assert coverage("what is it?", ["anything"]) == 1.0  # no content words: nothing to miss
    assert coverage("Lena adopt dog", ["Lena", "adopted a dog"]) == 1.0  # over all documents


def test_nothing_relevant_needs_both_signals_under_their_floor() -> None:
    from memstream.core.recall_gate import DEFAULT_FLOOR, Match, nothing_relevant

    low_cos, low_cov = DEFAULT_FLOOR.cosine / 2, DEFAULT_FLOOR.coverage / 2
    assert nothing_relevant(Match(low_cos, low_cov))
    assert not nothing_relevant(Match(DEFAULT_FLOOR.cosine, low_cov))  # close in meaning
    assert not nothing_relevant(Match(low_cos, DEFAULT_FLOOR.coverage))  # shares the words


@pytest.mark.parametrize(
    ("query", "now", "start", "end"),
    [
        (
            "what did we do last summer?",
            datetime(2024, 10, 5, tzinfo=UTC),
            (2024, 6, 1),
            (2024, 9, 1),
        ),
        (
            "what did we do last summer?",
            datetime(2024, 7, 5, tzinfo=UTC),
            (2023, 6, 1),
            (2023, 9, 1),
        ),
        ("hikes in the summer", datetime(2024, 7, 5, tzinfo=UTC), (2024, 6, 1), (2024, 9, 1)),
        ("this spring", datetime(2024, 10, 5, tzinfo=UTC), (2024, 3, 1), (2024, 6, 1)),
        ("the winter of 2023", None, (2023, 12, 1), (2024, 3, 1)),
        ("during spring 2024", None, (2024, 3, 1), (2024, 6, 1)),
        ("last fall", datetime(2024, 10, 5, tzinfo=UTC), (2023, 9, 1), (2023, 12, 1)),
        ("last winter", datetime(2024, 1, 15, tzinfo=UTC), (2022, 12, 1), (2023, 3, 1)),
    ],
)
def test_parse_time_seasons(
    query: str, now: datetime | None, start: tuple[int, int, int], end: tuple[int, int, int]
) -> None:
    ref = parse_time(query, now)
    assert ref is not None
    assert (ref.start, ref.end) == (datetime(*start, tzinfo=UTC), datetime(*end, tzinfo=UTC))


@pytest.mark.parametrize("query", ["I fall asleep early", "spring water", "the fall of Rome"])
def test_seasons_need_context_when_they_are_common_words(query: str) -> None:
    ref = parse_time(query, datetime(2024, 10, 5, tzinfo=UTC))
    assert ref is None or ref.text != query.split()[-1]


def test_a_named_time_moves_weight_to_event_time() -> None:
    from memstream.core.intent import PROFILES, TIME_SHARE

    now = datetime(2024, 10, 5, tzinfo=UTC)
    timed = classify("What did Maya do in May 2024?", now=now).profile
    plain = classify("What did Maya do?", now=now).profile
    assert plain.event_time == 0.0 and timed.event_time == TIME_SHARE
    assert math.isclose(sum(timed.weights().values()), 1.0)
    assert timed.relevance < PROFILES["temporal"].relevance  # taken in proportion


def test_a_question_of_two_people_at_once_is_asked_of_each() -> None:
    assert decompose("What pets do Lena and Tomas each have?") == [
        "What pets do Lena have?",
        "What pets do Tomas have?",
    ]
    assert decompose("Did Lena and Tomas both go to the wedding?") == [
        "Did Lena go to the wedding?",
        "Did Tomas go to the wedding?",
    ]
    # without "each" / "both" the pair is one subject
    assert decompose("What did Ana and Bob eat?") == ["What did Ana and Bob eat?"]


@pytest.mark.parametrize(
    ("query", "history"),
    [
        ("When is Maya's dentist appointment?", False),  # the date now in force
        ("When's the wedding now?", False),
        ("When did Maya move to Lisbon?", True),
        ("When was the meeting originally?", True),
        ("When is my flight and when did I book it?", True),
        ("Where did Maya live in January 2024?", True),
    ],
)
def test_a_present_tense_when_question_leaves_superseded_memories_out(
    query: str, history: bool
) -> None:
    assert classify(query).include_superseded is history
