"""A question about a time alone ("what did I do last weekend?"): recognised, its span's
bounds, and event time that counts what happened in the span, not what held through it
(core/intent.py, core/query_time.py, core/scoring.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.intent import (
    TIME_ONLY_IMPORTANCE,
    TIME_ONLY_SHARE,
    TIME_SHARE,
    classify,
    time_only,
)
from memstream.core.query_time import parse_time
from memstream.core.scoring import Candidate, event_time_match

NOW = datetime(2024, 4, 27, 12, tzinfo=UTC)  # a Saturday


def test_a_question_of_a_time_and_nothing_else() -> None:
    for q in (
        "What did I do last weekend?",
        "What happened in February?",
        "What did we talk about last week?",
        "What did I do in early April?",
        "Anything I did two weeks ago?",
    ):
        intent = classify(q, now=NOW)
        assert intent.time_only, q
        assert intent.profile.event_time == TIME_ONLY_SHARE, q
    for q in ("What did I eat in March?", "When did I go skiing?", "Where was I in May 2023?"):
        intent = classify(q, now=NOW)
        assert not intent.time_only, q
        assert intent.profile.event_time in (0.0, TIME_SHARE), q


def test_last_and_this_weekend() -> None:
    last = parse_time("what did I do last weekend?", NOW)
    assert last is not None and (last.start, last.end) == (
        datetime(2024, 4, 20, tzinfo=UTC),
        datetime(2024, 4, 22, tzinfo=UTC),
    )
    this = parse_time("this weekend", NOW)
    assert this is not None and this.start == datetime(2024, 4, 27, tzinfo=UTC)
    # asked on a Wednesday, last weekend is the one just gone
    wed = parse_time("last weekend", datetime(2024, 4, 24, 9, tzinfo=UTC))
    assert wed is not None and wed.start == datetime(2024, 4, 20, tzinfo=UTC)


def test_bounds_by_relation() -> None:
    march = parse_time("in March 2024", NOW)
    before = parse_time("before March 2024", NOW)
    since = parse_time("since March 2024", NOW)
    assert march is not None and before is not None and since is not None
    start = datetime(2024, 3, 1, tzinfo=UTC).timestamp()
    assert march.bounds == (start, datetime(2024, 4, 1, tzinfo=UTC).timestamp())
    assert before.bounds == (None, start)
    assert since.bounds == (start, None)


def _said(at: datetime) -> Candidate:
    return Candidate(memory_id="m", text="Maya went skiing", relevance=0.5, created_at=at)


def test_a_time_alone_counts_what_happened_not_what_held() -> None:
    march = parse_time("in March 2024", NOW)
    inside, held = _said(datetime(2024, 3, 9, tzinfo=UTC)), _said(datetime(2024, 1, 2, tzinfo=UTC))
    assert (
        event_time_match(inside, march) == event_time_match(inside, march, held_counts=False) == 1
    )
    assert event_time_match(held, march) == 0.5  # a state begun before, still true then
    assert event_time_match(held, march, held_counts=False) == 0.0


@given(st.text(max_size=60), st.integers(min_value=0, max_value=3000))
def test_time_only_never_fails_and_needs_a_time(query: str, days: int) -> None:
    now = NOW + timedelta(days=days)
    t = parse_time(query, now)
    assert time_only(query, t) is (classify(query, now=now).time_only)
    if t is None:
        assert not time_only(query, t)


def test_a_time_alone_weighs_importance_among_what_happened_then() -> None:
    """Tried as a new user would: "what happened in March?" answered "cooked pasta on 15
    March" before the nephew's birth: among the memories of the time, importance orders."""
    intent = classify("What happened in March?", now=NOW)
    assert intent.profile.importance == TIME_ONLY_IMPORTANCE
    assert abs(sum(intent.profile.weights().values()) - 1.0) < 1e-9
    assert classify("What was going on in my life in May 2024?", now=NOW).time_only


def test_early_late_and_mid_name_part_of_the_span() -> None:
    late = parse_time("What did I do in late January?", NOW)
    assert late is not None and (late.start.day, late.end.month) == (16, 2)
    early = parse_time("What did I do in early April?", NOW)
    assert early is not None and (early.start.day, early.end.day) == (1, 16)
    end = parse_time("What did I do at the end of March?", NOW)
    assert end is not None and (end.start.day, end.end.month) == (16, 4)
    mid = parse_time("What happened in mid-2023?", NOW)
    assert mid is not None and (mid.start.month, mid.end.month) == (4, 10)
    # a day or a week stays whole
    week = parse_time("What did I do early last week?", NOW)
    assert week is not None and (week.end - week.start).days == 7
