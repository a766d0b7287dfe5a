"""Bounded dedup state (core/seen_turns.py, core/recent_ids.py): bounded for any sequence,
a turn extracted within the window is always recognised, no copy of an extracted turn is
ever new, and a snapshot's round trip (pickle, as streams/snapshots.py writes it) decides
alike from then on."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.recent_ids import RecentIds
from memstream.core.seen_turns import Seen, SeenTurns

T0 = datetime(2024, 1, 1, tzinfo=UTC)

# one extraction: (namespace, session, turn ids, minutes after T0)
extraction = st.tuples(
    st.sampled_from(["a", "b"]),
    st.sampled_from([None, "s1", "s2", "s3"]),
    st.lists(st.integers(0, 40).map(lambda i: f"t{i}"), min_size=1, max_size=6),
    st.integers(0, 500),
)
extractions = st.lists(extraction, max_size=60)
capacities = st.integers(1, 12)


def run(capacity: int, ops: list[tuple[str, str | None, list[str], int]]) -> SeenTurns:
    seen = SeenTurns(capacity)
    for ns, session, ids, minute in ops:
        seen.extracted(ns, session, ids, T0 + timedelta(minutes=minute))
    return seen


@settings(max_examples=200, deadline=None)
@given(capacities, extractions)
def test_size_is_bounded_by_the_window_and_the_sessions(capacity: int, ops: list) -> None:
    seen = run(capacity, ops)
    assert len(seen) <= 2 * capacity
    assert set(seen.floors) <= {(ns, session) for ns, session, _ids, _m in ops}


@settings(max_examples=200, deadline=None)
@given(capacities, extractions)
def test_the_newest_extracted_turns_are_recognised_by_id(capacity: int, ops: list) -> None:
    seen = run(capacity, ops)
    order: list[tuple[str, str]] = []  # by latest extraction
    for ns, _session, ids, _minute in ops:
        for turn_id in ids:
            if (ns, turn_id) in order:
                order.remove((ns, turn_id))
            order.append((ns, turn_id))
    for ns, turn_id in order[-capacity:]:
        assert seen.seen(ns, turn_id)
        # whatever the copy's session or date
        assert seen.verdict(ns, "other", turn_id, T0) is Seen.SEEN


@settings(max_examples=300, deadline=None)
@given(capacities, extractions, st.data())
def test_no_copy_of_an_extracted_turn_is_new(capacity: int, ops: list, data: st.DataObject) -> None:
    seen = run(capacity, ops)
    for ns, session, ids, minute in ops:
        # a copy carries its turn's own time: at or before its extraction's
        earlier = data.draw(st.integers(0, minute))
        for turn_id in ids:
            at = T0 + timedelta(minutes=earlier)
            assert seen.verdict(ns, session, turn_id, at) is not Seen.NEW


@settings(max_examples=200, deadline=None)
@given(capacities, extractions, extractions, st.data())
def test_a_round_trip_decides_alike_from_then_on(
    capacity: int, before: list, after: list, data: st.DataObject
) -> None:
    live = run(capacity, before)
    restored = pickle.loads(pickle.dumps(live, protocol=pickle.HIGHEST_PROTOCOL))
    assert restored == live
    for ns, session, ids, minute in after:
        at = T0 + timedelta(minutes=minute)
        for s in (live, restored):
            s.extracted(ns, session, ids, at)
    assert restored == live
    queries = data.draw(st.lists(extraction, max_size=10))
    for ns, session, ids, minute in queries:
        for turn_id in ids:
            at = T0 + timedelta(minutes=minute)
            assert restored.verdict(ns, session, turn_id, at) is live.verdict(
                ns, session, turn_id, at
            )


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10), st.lists(st.integers(0, 30).map(str), max_size=80))
def test_recent_ids_are_bounded_and_keep_the_newest(capacity: int, ids: list[str]) -> None:
    recent = RecentIds(capacity)
    for i in ids:
        recent.add(i)
    assert len(recent) <= 2 * capacity
    newest: list[str] = []
    for i in reversed(ids):
        if i not in newest:
            newest.append(i)
    assert all(i in recent for i in newest[:capacity])
    again = pickle.loads(pickle.dumps(recent))
    assert again == recent
    for s in (recent, again):
        s.add("new")
    assert again == recent
