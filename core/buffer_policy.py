"""When a session's turn buffer is extracted: pure rules on event time.

An urgent HIGH signal extracts at once (one call for the whole buffer, so the model sees the
context); a full buffer extracts as a batch; a buffer whose first turn is older than
``max_age`` relative to the partition's event-time watermark extracts as a batch.
``idle_seconds`` is the one wall-clock rule: it only decides *when* a quiet buffer is
flushed (liveness), never *what* is extracted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

Trigger = Literal["high_signal", "buffer_full", "buffer_age", "idle"]


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
    idle_seconds: float = 5.0
    urgent: frozenset[str] | None = URGENT_REASONS  # None: every HIGH turn extracts at once


def trigger_on_append(
    *,
    level: str,
    size: int,
    first_at: datetime,
    watermark: datetime,
    config: BufferConfig,
    reasons: tuple[str, ...] = (),
) -> Trigger | None:
    """The trigger fired by appending a turn of ``level`` (buffer now holds ``size`` turns)."""
    if level == "HIGH" and (config.urgent is None or config.urgent.intersection(reasons)):
        return "high_signal"
    if size >= config.max_turns:
        return "buffer_full"
    if watermark - first_at >= config.max_age:
        return "buffer_age"
    return None


def due(
    *, first_at: datetime, watermark: datetime, idle_for: float, config: BufferConfig
) -> Trigger | None:
    """Checked by the timer: age in event time, or idleness in wall time."""
    if watermark - first_at >= config.max_age:
        return "buffer_age"
    if idle_for >= config.idle_seconds:
        return "idle"
    return None
