"""A set of the most recent ids, bounded: the inputs whose effects a partition has applied.

Every event an agent writes names its input as causation, so a re-delivered input is
recognised by its id (``PartitionState.processed``). A re-delivery comes from the input's
committed offset, and an agent commits an input as soon as the events it caused are
durable (feedback parked for its recall waits seconds at most): only inputs of the last
moments are ever read again, and the events they caused are among the newest on the memory
log. Keeping the newest ``capacity`` causation ids therefore recognises every re-delivery,
as long as fewer than ``capacity`` other causes reached the log in between — a partition
writes far fewer in the seconds a commit trails. Two generations of at most ``capacity``
ids (the older dropped when the newer is full): the newest ``capacity`` are always kept, at
most twice that held, in plain sets (the ids are mostly shared with the events and memory
states that name them). Deterministic in the order ids are added, so a fold of the log, the live
state and a snapshot agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: causation ids a partition always recognises (up to twice as many are held)
RECENT_CAUSES = 100_000


@dataclass
class RecentIds:
    capacity: int = RECENT_CAUSES
    newer: set[str] = field(default_factory=set)
    older: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.capacity < 1:
            raise ValueError("capacity must be at least 1")

    def add(self, id_: str) -> None:
        if id_ in self.newer:
            return
        if len(self.newer) >= self.capacity:
            self.older, self.newer = self.newer, set()
        self.newer.add(id_)

    def __contains__(self, id_: object) -> bool:
        return id_ in self.newer or id_ in self.older

    def __len__(self) -> int:
        return len(self.newer) + len(self.older)
