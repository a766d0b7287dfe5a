"""Health verdicts: pure functions of what was observed, so /health and ``memstream status``
say the same thing for the same observations (and unit tests can show each rule).

Times are seconds on one clock chosen by the caller (the worker's wall clock): health
describes the running process, not event time.

Rules:

* **read position past the log's end**: a projection's position or a consumer group's
  committed offset beyond the partition's end offset means the log was lost or recreated
  under it (an embedded broker restarted with memory storage, a topic deleted and made
  again): nothing it reads next is what it thinks it is.
* **stalled**: records are waiting (end > position) and the positions have not moved for
  ``stall_after`` seconds. Positions are tracked per reader (a projection, or one input
  topic of the agents' group) as one tuple, so a reader that moves on any partition is
  making progress.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: "topic/partition" -> offset (next to read, or committed), as /health reports positions
Offsets = Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Since:
    """A reader's positions and since when they stood there with records waiting."""

    value: tuple[int, ...]
    since: float
    waiting: bool = False


def track(
    previous: Mapping[str, Since],
    current: Mapping[str, tuple[tuple[int, ...], int]],
    now: float,
) -> dict[str, Since]:
    """Fold one observation, reader -> (positions, records waiting), into the tracker: the
    clock of a reader restarts when it moves or has nothing to do."""
    out: dict[str, Since] = {}
    for reader, (value, waiting) in current.items():
        before = previous.get(reader)
        kept = before is not None and before.waiting and before.value == value and waiting > 0
        out[reader] = before if kept and before is not None else Since(value, now, waiting > 0)
    return out


def behind(positions: Offsets, ends: Offsets) -> int:
    """Records waiting for this reader (partitions it never read count from 0)."""
    return sum(max(0, end - positions.get(tp, 0)) for tp, end in ends.items())


def past_end(positions: Offsets, ends: Offsets) -> list[str]:
    """ "topic/partition at N, log end M" for each position beyond its partition's end."""
    return [
        f"{tp} at {at}, log end {ends[tp]}"
        for tp, at in sorted(positions.items())
        if tp in ends and at > ends[tp]
    ]


def stalled_for(tracked: Since | None, waiting: int, now: float, stall_after: float) -> float:
    """Seconds a reader with ``waiting`` records has not moved, when that is at least
    ``stall_after``; 0.0 when it is not stalled (nothing waiting, or it moved lately)."""
    if tracked is None or waiting <= 0:
        return 0.0
    idle = now - tracked.since
    return idle if idle >= stall_after else 0.0


def positions_of(offsets: Offsets, tps: Iterable[str]) -> tuple[int, ...]:
    """The tracker value of a reader: its offsets on ``tps``, in that order."""
    return tuple(offsets.get(tp, 0) for tp in tps)


def reader_check(
    name: str,
    positions: Offsets,
    ends: Offsets,
    tracked: Since | None,
    now: float,
    stall_after: float,
    *,
    what: str = "read position",
) -> Check:
    """One reader (a projection, an agent's input topic): past the end, stalled, or fine."""
    lost = past_end(positions, ends)
    if lost:
        return Check(
            name,
            False,
            f"{what} past the end of the log ({'; '.join(lost[:4])}"
            + (f"; {len(lost) - 4} more" if len(lost) > 4 else "")
            + "): the log was lost or recreated; run `memstream recover` (README: Recovery)",
        )
    waiting = behind(positions, ends)
    idle = stalled_for(tracked, waiting, now, stall_after)
    if idle:
        return Check(
            name, False, f"stalled: {waiting} record(s) waiting, no progress for {idle:.0f} s"
        )
    return Check(name, True, f"{waiting} record(s) waiting" if waiting else "at the log's end")


def status(checks: Iterable[Check]) -> str:
    return "ok" if all(c.ok for c in checks) else "degraded"


def identity_check(recorded: str | None, found: str | None, where: str) -> Check:
    """Is the log the one the data directory was built from (``infra/log_identity.py``)?"""
    if found is None:
        return Check(
            "log", False, f"no identity record on the log at {where} (memstream topics create)"
        )
    if recorded is None:
        return Check("log", True, f"epoch {found[:12]} (first use of this data directory)")
    if recorded != found:
        return Check(
            "log",
            False,
            f"not the log this data directory was built from (epoch {found[:12] or '?'}, "
            f"recorded {recorded[:12]}): the broker lost its data or the topics were "
            "recreated; stop the worker and run `memstream recover` (README: Recovery)",
        )
    return Check("log", True, f"epoch {found[:12]}, the one this data directory was built from")
