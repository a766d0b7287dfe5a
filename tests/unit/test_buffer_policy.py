from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.buffer_policy import BufferConfig, due, trigger_on_append

T0 = datetime(2024, 1, 1, tzinfo=UTC)
CFG = BufferConfig(max_turns=3, max_age=timedelta(minutes=10), idle_seconds=5)


def test_urgent_high_signal_extracts_now() -> None:
    at = {"first_at": T0, "watermark": T0, "config": CFG, "size": 1}
    assert trigger_on_append(level="HIGH", reasons=("correction",), **at) == "high_signal"  # type: ignore[arg-type]
    assert trigger_on_append(level="HIGH", reasons=("fact",), **at) is None  # type: ignore[arg-type]
    every = BufferConfig(max_turns=3, urgent=None)
    assert (
        trigger_on_append(level="HIGH", size=1, first_at=T0, watermark=T0, config=every)
        == "high_signal"
    )


def test_full_buffer() -> None:
    assert trigger_on_append(level="NORMAL", size=2, first_at=T0, watermark=T0, config=CFG) is None
    assert (
        trigger_on_append(level="NORMAL", size=3, first_at=T0, watermark=T0, config=CFG)
        == "buffer_full"
    )


def test_age_is_event_time() -> None:
    late = T0 + timedelta(minutes=10)
    assert (
        trigger_on_append(level="SKIP", size=1, first_at=T0, watermark=late, config=CFG)
        == "buffer_age"
    )
    assert due(first_at=T0, watermark=late, idle_for=0, config=CFG) == "buffer_age"
    assert due(first_at=T0, watermark=T0 + timedelta(minutes=9), idle_for=0, config=CFG) is None


def test_idle_is_only_liveness() -> None:
    assert due(first_at=T0, watermark=T0, idle_for=5.0, config=CFG) == "idle"
    assert due(first_at=T0, watermark=T0, idle_for=4.9, config=CFG) is None
