"""Bounds on event time: how far ahead of the clock an event may claim to have happened.

``occurred_at`` is set by producers and drives every rule in the core (buffers, the dream
cycle, retention), so one event dated 9999 would run a dream cycle dated 9999 and age every
memory of its namespace by millennia. An event is out of bounds when it happened before 1970
or later than ``skew`` past the later of its intake time (the wall clock at the edge; in the
agents the record's broker timestamp, never later than the wall clock, so a replay decides
alike) and the namespace's watermark (its newest event time: a namespace whose clock runs
ahead, say a simulation, may go on from where it is). Pure: every time is an argument.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memstream.schemas.errors import EventValidationError

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)

#: the dead-letter reasons (and error codes at the edge)
TOO_FAR_AHEAD = "future_event_time"
TOO_EARLY = "ancient_event_time"
CODES = frozenset({TOO_FAR_AHEAD, TOO_EARLY})


def event_time_error(
    occurred_at: datetime,
    *,
    intake: datetime,
    skew: timedelta,
    watermark: datetime | None = None,
    path: str = "occurred_at",
) -> EventValidationError | None:
    """None when ``occurred_at`` is within bounds, else the error naming ``path``."""
    if occurred_at < EARLIEST:
        return EventValidationError(
            TOO_EARLY, f"{occurred_at.isoformat()} is before 1970-01-01T00:00:00+00:00", path
        )
    reference = intake if watermark is None else max(intake, watermark)
    try:
        limit = reference + skew
    except OverflowError:  # a reference near year 9999: nothing can be later than that
        return None
    if occurred_at > limit:
        return EventValidationError(
            TOO_FAR_AHEAD,
            f"{occurred_at.isoformat()} is more than {_span(skew)} after "
            f"{reference.isoformat(timespec='seconds')} (the clock at intake or the "
            "namespace's newest event time); see max_future_skew_hours",
            path,
        )
    return None


def _span(skew: timedelta) -> str:
    hours = skew.total_seconds() / 3600
    return f"{hours:g} h"
