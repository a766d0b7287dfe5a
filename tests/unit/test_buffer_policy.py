from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memstream.core.buffer_policy import (
    BufferConfig,
    due_on_clock,
    flush_order,
    quiet,
    trigger_on_append,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)
CFG = BufferConfig(max_turns=3, max_age=timedelta(minutes=10), idle_seconds=5)


def test_urgent_high_signal_extracts_now() -> None:
    at = {"first_at": T0, "last_at": T0, "config": CFG, "size": 1}
    assert trigger_on_append(level="HIGH", reasons=("correction",), **at) == "high_signal"  # type: ignore[arg-type]
    assert trigger_on_append(level="HIGH", reasons=("fact",), **at) is None  # type: ignore[arg-type]
    every = BufferConfig(max_turns=3, urgent=None)
    assert (
        trigger_on_append(level="HIGH", size=1, first_at=T0, last_at=T0, config=every)
        == "high_signal"
    )


def test_full_buffer() -> None:
    assert trigger_on_append(level="NORMAL", size=2, first_at=T0, last_at=T0, config=CFG) is None
    assert (
        trigger_on_append(level="NORMAL", size=3, first_at=T0, last_at=T0, config=CFG)
        == "buffer_full"
    )


def test_age_is_event_time() -> None:
    late = T0 + timedelta(minutes=10)
    assert (
        trigger_on_append(level="SKIP", size=2, first_at=T0, last_at=late, config=CFG)
        == "buffer_age"
    )
    at = {"first_at": T0, "last_at": T0, "config": CFG}
    assert due_on_clock(watermark=late, **at) == "buffer_age"  # type: ignore[arg-type]


def test_another_session_past_the_gap_flushes_a_buffer() -> None:
    last = T0 + timedelta(minutes=6)
    cfg = BufferConfig(max_age=timedelta(minutes=30), gap=timedelta(minutes=5))
    at = {"first_at": T0, "last_at": last, "config": cfg}
    assert due_on_clock(watermark=last + timedelta(minutes=4), **at) is None  # type: ignore[arg-type]
    assert due_on_clock(watermark=last + timedelta(minutes=5), **at) == "session_change"  # type: ignore[arg-type]
    assert due_on_clock(watermark=T0 + timedelta(minutes=30), **at) == "buffer_age"  # type: ignore[arg-type]


def test_idle_is_only_liveness() -> None:
    assert quiet(idle_for=5.0, config=CFG)
    assert not quiet(idle_for=4.9, config=CFG)


def test_buffers_flushed_together_go_in_event_time_order() -> None:
    keys = [(("ns", "b"), T0 + timedelta(minutes=1)), (("ns", "a"), T0 + timedelta(minutes=1))]
    keys.append((("ns", None), T0))
    assert flush_order(keys) == [("ns", None), ("ns", "a"), ("ns", "b")]
    assert flush_order(reversed(keys)) == flush_order(keys)


def test_a_session_behind_the_namespaces_clock_is_not_extracted_turn_by_turn() -> None:
    # its own turns a minute apart: the clock of newer sessions says nothing of its age
    a_minute = T0 + timedelta(minutes=1)
    assert (
        trigger_on_append(level="NORMAL", size=2, first_at=T0, last_at=a_minute, config=CFG) is None
    )
