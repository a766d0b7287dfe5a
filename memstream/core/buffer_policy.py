"""When a session's turn buffer is extracted: pure rules on event time.

An urgent HIGH signal extracts at once (one call for the whole buffer, so the model sees the
context); a full buffer extracts as a batch, and so does one whose own turns span
``max_age``. When a namespace's event-time clock moves (one of its sessions speaks), each
of its *other* open buffers is extracted once its first turn is ``max_age`` older than the
clock, or its last turn ``gap`` older (the tenant moved on to another conversation): decided at the namespace, in the order of its own turns, so the same
input gives the same flushes whatever the batch boundaries or the speed of the worker.

``idle_seconds`` is the one wall-clock rule, for liveness only: a namespace that has sent
nothing for that long has its open buffers extracted (nothing later will move its clock).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, TypeVar

Trigger = Literal["high_signal", "buffer_full", "buffer_age", "session_change", "idle"]
K = TypeVar("K", bound=Hashable)


#: HIGH reasons that cannot wait for the batch: a correction must supersede the wrong
#: memory before it is recalled again, and a decision changes what later turns mean.
#: Other HIGH reasons (a commitment, an explicit fact, a strong preference, high importance)
#: stay with the batch: extracting them a few turns later loses nothing and saves a call
#: (measured on the evaluation conversations: 12 extraction calls per 100 turns instead of 18).
URGENT_REASONS: frozenset[str] = frozenset({"correction", "decision"})


@dataclass(frozen=True, slots=True)
class BufferConfig:
    max_turns: int = 12
    max_age: timedelta = timedelta(minutes=30)
    gap: timedelta = timedelta(minutes=10)
    idle_seconds: float = 5.0
    urgent: frozenset[str] | None = URGENT_REASONS  # None: every HIGH turn extracts at once


def trigger_on_append(
    *,
    level: str,
    size: int,
    first_at: datetime,
    last_at: datetime,
    config: BufferConfig,
    reasons: tuple[str, ...] = (),
) -> Trigger | None:
    """The trigger fired by appending a turn of ``level`` (buffer now holds ``size`` turns,
    ``first_at`` to ``last_at`` in event time).

    The buffer's age is its own session's time, not the namespace's clock: a session older
    than the clock (a conversation imported after a newer one, a history sent out of order)
    would otherwise be extracted turn by turn, each turn without the one before it, and an
    answer would lose the question it answers."""
    if level == "HIGH" and (config.urgent is None or config.urgent.intersection(reasons)):
        return "high_signal"
    if size >= config.max_turns:
        return "buffer_full"
    if last_at - first_at >= config.max_age:
        return "buffer_age"
    return None


def due_on_clock(
    *, first_at: datetime, last_at: datetime, watermark: datetime, config: BufferConfig
) -> Trigger | None:
    """An open buffer of a namespace whose clock moved to ``watermark`` (another session spoke)."""
    if watermark - first_at >= config.max_age:
        return "buffer_age"
    if watermark - last_at >= config.gap:
        return "session_change"
    return None


def quiet(*, idle_for: float, config: BufferConfig) -> bool:
    """Wall clock, liveness only: the namespace sent nothing for ``idle_seconds``."""
    return idle_for >= config.idle_seconds


def flush_order(buffers: Iterable[tuple[K, datetime]]) -> list[K]:
    """Buffers flushed together go in the order of their first turns (then their keys), so
    the memory state each one is planned against does not depend on dict order."""
    return [key for key, _at in sorted(buffers, key=lambda kv: (kv[1], str(kv[0])))]
