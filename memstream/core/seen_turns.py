"""Which turns a partition has extracted, in bounded memory.

A turn can reach the write path more than once: re-read from the committed input offset
after a crash or rebalance, re-sent by a producer's retry (same turn id, a later offset,
soon after), or re-sent after a restart. Each must be recognised, so every turn is
extracted exactly once; keeping every (namespace, turn id) ever extracted does that, but
grows with the whole history. This keeps two things instead:

- a **window** of the most recently extracted turn ids, in two generations of at most
  ``capacity`` ids: when the newer one is full the older is dropped and the newer takes its
  place, so the newest ``capacity`` ids are always there and at most twice that are held
  (plain sets: lighter than an ordered, one-by-one eviction). A turn id in the
  window is recognised exactly. Each generation also keeps, per (namespace, session), the
  latest event time of its extractions (the TurnsExtracted record's: its turns' latest);
- a **floor** per (namespace, session): the latest extraction time of that session in the
  generations dropped so far. Only sessions that lost ids to the window have one: the
  structure holds at most ``2 x capacity`` ids plus a time per session.

The rule for a turn not in the window: **at or below its session's floor it counts as
already extracted** (``BEYOND_WINDOW``; the write path dead-letters it with that reason,
never drops it silently), above it the turn is new. No turn is ever extracted twice: a
turn that left the window was extracted no later than its session's floor, and its own
time is at or before its extraction's, so any copy of it is at or below the floor. The price is that a genuinely new turn dated at or before a turn of
its own session extracted more than ``capacity`` extractions ago is refused, visibly —
sessions run forward in event time, so that is a backfill into an old session.

Why the window is enough for the re-deliveries that happen: a crash re-reads from the
committed offset, which trails the newest turn only by the turns held in open buffers
(the buffer rules flush them within a bounded age, or the idle rule within seconds); a
producer's retry arrives soon after the original; both are far fewer turns than
``capacity``. A turn re-sent long after (days, a re-import) has usually left the window and
is then caught by the floor. Deterministic in the order of TurnsExtracted records, so the
fold of the log, the live state and a snapshot of either decide alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

#: turn ids a partition always recognises (up to twice as many are held, ~90 bytes each):
#: more than it reads in the longest a buffer holds a turn (buffer_max_turns x
#: buffer_idle_seconds) at the write path's speed
WINDOW_TURNS = 100_000

Session = tuple[str, str | None]  # (namespace, session id)


class Seen(StrEnum):
    NEW = "new"
    SEEN = "seen"  # in the window: extracted before
    BEYOND_WINDOW = "beyond_dedup_window"  # not in the window, at or below its session's floor


@dataclass
class Generation:
    turns: set[tuple[str, str]] = field(default_factory=set)  # (namespace, turn id)
    latest: dict[Session, datetime] = field(default_factory=dict)  # of its extractions


@dataclass
class SeenTurns:
    capacity: int = WINDOW_TURNS
    newer: Generation = field(default_factory=Generation)
    older: Generation = field(default_factory=Generation)
    floors: dict[Session, datetime] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.capacity < 1:
            raise ValueError("capacity must be at least 1")

    def __len__(self) -> int:
        return len(self.newer.turns) + len(self.older.turns)

    def extracted(
        self, namespace: str, session: str | None, turn_ids: Iterable[str], at: datetime
    ) -> None:
        """Record one extraction (a TurnsExtracted record): its turns, session and time."""
        for turn_id in turn_ids:
            if len(self.newer.turns) >= self.capacity:
                self._rotate()
            self.newer.turns.add((namespace, turn_id))
            _raise(self.newer.latest, (namespace, session), at)

    def _rotate(self) -> None:
        for key, at in self.older.latest.items():
            _raise(self.floors, key, at)
        self.older, self.newer = self.newer, Generation()

    def seen(self, namespace: str, turn_id: str) -> bool:
        """In the window: extracted before, for certain."""
        key = (namespace, turn_id)
        return key in self.newer.turns or key in self.older.turns

    def verdict(
        self, namespace: str, session: str | None, turn_id: str, occurred_at: datetime
    ) -> Seen:
        if self.seen(namespace, turn_id):
            return Seen.SEEN
        floor = self.floors.get((namespace, session))
        if floor is not None and occurred_at <= floor:
            return Seen.BEYOND_WINDOW
        return Seen.NEW

    def floor(self, namespace: str, session: str | None) -> datetime | None:
        return self.floors.get((namespace, session))


def _raise(times: dict[Session, datetime], key: Session, at: datetime) -> None:
    if key not in times or at > times[key]:
        times[key] = at
