from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.core.schedule import boundary_at, due_boundary

DAY = timedelta(days=1)


def test_daily_boundaries_are_midnight_utc() -> None:
    at = datetime(2024, 3, 5, 17, 30, tzinfo=UTC)
    assert boundary_at(at, DAY) == datetime(2024, 3, 5, tzinfo=UTC)
    assert boundary_at(datetime(2024, 3, 5, tzinfo=UTC), DAY) == datetime(2024, 3, 5, tzinfo=UTC)


def test_a_cycle_is_due_once_per_boundary() -> None:
    first = datetime(2024, 3, 5, 9, tzinfo=UTC)
    assert due_boundary(None, first, DAY) == datetime(2024, 3, 5, tzinfo=UTC)
    ran = datetime(2024, 3, 5, tzinfo=UTC)
    assert due_boundary(ran, first + timedelta(hours=10), DAY) is None
    assert due_boundary(ran, datetime(2024, 3, 6, 0, 1, tzinfo=UTC), DAY) == datetime(
        2024, 3, 6, tzinfo=UTC
    )


def test_a_jump_over_many_boundaries_runs_the_latest() -> None:
    ran = datetime(2024, 3, 5, tzinfo=UTC)
    assert due_boundary(ran, datetime(2024, 6, 1, 12, tzinfo=UTC), DAY) == datetime(
        2024, 6, 1, tzinfo=UTC
    )


def test_late_events_never_run_an_older_cycle() -> None:
    ran = datetime(2024, 3, 5, tzinfo=UTC)
    assert due_boundary(ran, datetime(2024, 3, 1, tzinfo=UTC), DAY) is None


def test_the_period_must_be_positive() -> None:
    with pytest.raises(ValueError):
        boundary_at(datetime(2024, 1, 1, tzinfo=UTC), timedelta(0))


times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)


@given(times, st.integers(min_value=1, max_value=24 * 30))
def test_boundary_is_at_or_before_and_within_one_period(at: datetime, hours: int) -> None:
    every = timedelta(hours=hours)
    b = boundary_at(at, every)
    assert b <= at < b + every


@given(st.lists(times, min_size=1, max_size=30), st.integers(min_value=1, max_value=48))
def test_cycles_only_move_forward(stream: list[datetime], hours: int) -> None:
    every = timedelta(hours=hours)
    last: datetime | None = None
    ran: list[datetime] = []
    for at in stream:
        b = due_boundary(last, at, every)
        if b is not None:
            assert b <= at
            ran.append(b)
            last = b
    assert ran == sorted(set(ran))  # strictly increasing: no boundary runs twice
