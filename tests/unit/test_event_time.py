"""Event-time bounds (core/event_time.py): pure, every time an argument."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.event_time import EARLIEST, TOO_EARLY, TOO_FAR_AHEAD, event_time_error

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)
times = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
)
skews = st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=3650))


def test_the_far_future_and_before_1970_are_out_and_name_the_field() -> None:
    far = event_time_error(datetime(9999, 12, 31, tzinfo=UTC), intake=NOW, skew=DAY)
    assert far is not None and far.code == TOO_FAR_AHEAD and far.path == "occurred_at"
    assert "9999-12-31" in far.message and "24 h" in far.message
    old = event_time_error(datetime(1969, 12, 31, tzinfo=UTC), intake=NOW, skew=DAY)
    assert old is not None and old.code == TOO_EARLY
    assert event_time_error(NOW + DAY, intake=NOW, skew=DAY) is None  # exactly at the bound
    assert event_time_error(NOW + DAY + timedelta(seconds=1), intake=NOW, skew=DAY)
    assert event_time_error(EARLIEST, intake=NOW, skew=DAY) is None


def test_a_namespace_whose_clock_runs_ahead_may_go_on_from_its_watermark() -> None:
    ahead = NOW + 30 * DAY
    assert event_time_error(ahead + DAY / 2, intake=NOW, skew=DAY, watermark=ahead) is None
    assert event_time_error(ahead + 2 * DAY, intake=NOW, skew=DAY, watermark=ahead)


@given(times, times, st.none() | times, skews)
def test_never_raises_and_accepts_exactly_the_window(
    at: datetime, intake: datetime, watermark: datetime | None, skew: timedelta
) -> None:
    error = event_time_error(at, intake=intake, skew=skew, watermark=watermark)
    reference = intake if watermark is None else max(intake, watermark)
    try:
        limit = reference + skew
    except OverflowError:
        limit = datetime.max.replace(tzinfo=UTC)
    assert (error is None) == (EARLIEST <= at <= limit)


@given(times, times, skews, skews)
def test_a_larger_skew_never_rejects_what_a_smaller_accepts(
    at: datetime, intake: datetime, small: timedelta, extra: timedelta
) -> None:
    if event_time_error(at, intake=intake, skew=small) is None:
        assert event_time_error(at, intake=intake, skew=small + extra) is None
