"""Recall telemetry gathered before a projection applies it (projections/runner.py
``_gather_telemetry``): access events and workflow records alone wait for more, up to the
setting; anything from the memory log ends the wait at once and is never held."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiokafka import TopicPartition

from memstream.projections.runner import ProjectionRunner
from tests.projections.test_runner_linger import Nothing

ACCESS, WORKFLOWS = TopicPartition("t.access", 0), TopicPartition("t.workflows", 1)
LOG = TopicPartition("t.memory.log", 0)


class Consumer:
    """Hands out one batch per getmany; with none left, waits out the timeout as a reader
    with nothing to read does."""

    def __init__(self, *later: dict[TopicPartition, list[Any]]) -> None:
        self.later = list(later)

    async def getmany(self, timeout_ms: int, max_records: int) -> dict[TopicPartition, list[Any]]:
        if self.later:
            return self.later.pop(0)
        await asyncio.sleep(timeout_ms / 1000)
        return {}

    def assignment(self) -> set[TopicPartition]:
        return {ACCESS, WORKFLOWS, LOG}


def gather(
    wait: float, consumer: Consumer, batch: dict[TopicPartition, list[Any]]
) -> tuple[dict[TopicPartition, list[Any]], float]:
    runner = ProjectionRunner(
        "",
        [],
        Nothing(),
        telemetry=["t.access", "t.workflows"],
        telemetry_wait=wait,  # type: ignore[arg-type]
    )

    async def go() -> tuple[dict[TopicPartition, list[Any]], float]:
        started = time.monotonic()
        out = await runner._gather_telemetry(consumer, batch, asyncio.Event())  # type: ignore[arg-type]
        return out, time.monotonic() - started

    return asyncio.run(go())


def test_telemetry_alone_waits_and_takes_what_arrived() -> None:
    consumer = Consumer({ACCESS: ["a2"]}, {WORKFLOWS: ["w1"]})
    out, waited = gather(0.3, consumer, {ACCESS: ["a1"]})
    assert out == {ACCESS: ["a1", "a2"], WORKFLOWS: ["w1"]}
    assert 0.25 <= waited < 1.0


def test_a_memory_log_record_ends_the_wait_at_once() -> None:
    consumer = Consumer({LOG: ["created"]}, {ACCESS: ["late"]})
    out, waited = gather(5.0, consumer, {ACCESS: ["a1"]})
    assert out == {ACCESS: ["a1"], LOG: ["created"]} and waited < 0.5
    out, waited = gather(5.0, Consumer(), {LOG: ["created"], ACCESS: ["a1"]})
    assert out == {LOG: ["created"], ACCESS: ["a1"]} and waited < 0.1


def test_off_when_the_wait_is_zero() -> None:
    out, waited = gather(0.0, Consumer({ACCESS: ["late"]}), {ACCESS: ["a1"]})
    assert out == {ACCESS: ["a1"]} and waited < 0.1
