"""The projection port: read models built from the log, with tracking of what they applied.

A projection consumes records (topic, partition, offset, bytes) and applies each batch
*together with* the next offsets to read, atomically where the store allows it. On start
the runner asks ``positions()`` and seeks there; so a record is applied once even though
Kafka delivers at least once. Projections also drop repeated event ids (a producer retry
publishes the same event at a new offset).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Self


@dataclass(frozen=True, slots=True)
class LogRecord:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes
    timestamp_ms: int = 0


@dataclass
class ApplyStats:
    records: int = 0
    applied: int = 0
    duplicates: int = 0
    rejected: int = 0

    def add(self, other: ApplyStats) -> None:
        self.records += other.records
        self.applied += other.applied
        self.duplicates += other.duplicates
        self.rejected += other.rejected


class Projection(ABC):
    name: str

    @abstractmethod
    def positions(self) -> dict[tuple[str, int], int]:
        """Next offset to read per (topic, partition); missing means from the start."""

    @abstractmethod
    def apply(self, records: Sequence[LogRecord]) -> ApplyStats:
        """Apply a batch and record its positions (one transaction where possible)."""

    @abstractmethod
    def skip(self, record: LogRecord, reason: str) -> None:
        """Step over a record that cannot be applied: keep it where the store keeps rejects
        (with ``reason`` and its original bytes) and record the position after it, so the
        projection goes on instead of retrying it forever."""

    def idle(self) -> bool:
        """The log has nothing new for now: a chance to write out what is buffered. True
        while something is still held back (the runner calls again at its next idle poll)."""
        return False

    def close(self) -> None:  # noqa: B027 - optional hook
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
