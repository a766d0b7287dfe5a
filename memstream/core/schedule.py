"""When the scheduled maintenance (dream cycle and tier rules) is due, in event time.

Boundaries are fixed multiples of the period since the Unix epoch (daily: midnight UTC), so
the same input stream always yields the same cycle times, on any worker and after a replay.
A namespace's cycle for boundary ``B`` runs before its first input event at or after ``B``;
a clock that jumps over several boundaries runs one cycle, at the latest of them (the rules
read ages in event time, so skipped boundaries lose nothing)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def boundary_at(at: datetime, every: timedelta) -> datetime:
    """The latest boundary at or before ``at``."""
    if every <= timedelta(0):
        raise ValueError("the period must be positive")
    periods = (at - EPOCH) // every
    return EPOCH + periods * every


def due_boundary(last: datetime | None, at: datetime, every: timedelta) -> datetime | None:
    """The boundary to run a cycle at before an event at ``at``, or None if none is due.

    ``last`` is the namespace's latest cycle time (None: never ran)."""
    boundary = boundary_at(at, every)
    if last is not None and boundary <= last:
        return None
    return boundary
