"""A projection's batches while the log streams (projections/runner.py ``_linger``): a record
after a quiet spell is applied at once; one right after a batch waits for the linger and takes
what arrived meanwhile with it; a full batch or a stop never waits."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiokafka import TopicPartition

from memstream.projections.port import ApplyStats, LogRecord
from memstream.projections.runner import ProjectionRunner

TP0, TP1 = TopicPartition("t.memory.log", 0), TopicPartition("t.memory.log", 1)


class Nothing:
    name = "nothing"

    def apply(self, records: list[LogRecord]) -> ApplyStats:
        return ApplyStats(records=len(records))


class Consumer:
    """Hands out the batches it was given, one per getmany."""

    def __init__(self, *later: dict[TopicPartition, list[Any]]) -> None:
        self.later = list(later)
        self.asked: list[int] = []

    async def getmany(self, timeout_ms: int, max_records: int) -> dict[TopicPartition, list[Any]]:
        self.asked.append(max_records)
        return self.later.pop(0) if self.later else {}

    def assignment(self) -> set[TopicPartition]:
        return {TP0}


def linger(
    runner: ProjectionRunner,
    consumer: Consumer,
    batch: dict[TopicPartition, list[Any]],
    since_last: float,
    stop: bool = False,
    took: float = 0.0,
) -> tuple[dict[TopicPartition, list[Any]], float]:
    async def go() -> tuple[dict[TopicPartition, list[Any]], float]:
        event = asyncio.Event()
        if stop:
            event.set()
        started = time.monotonic()
        out = await runner._linger(consumer, batch, started - since_last, event, took)  # type: ignore[arg-type]
        return out, time.monotonic() - started

    return asyncio.run(go())


def runner(linger: float, max_records: int = 100, group: str | None = None) -> ProjectionRunner:
    return ProjectionRunner("", [], Nothing(), linger=linger, max_records=max_records, group=group)  # type: ignore[arg-type]


def test_after_a_quiet_spell_the_batch_is_applied_at_once() -> None:
    consumer = Consumer({TP0: ["late"]})
    out, waited = linger(runner(0.3), consumer, {TP0: ["a"]}, since_last=5.0)
    assert out == {TP0: ["a"]} and waited < 0.1 and consumer.asked == []


def test_right_after_a_batch_it_waits_and_takes_what_arrived() -> None:
    consumer = Consumer({TP0: ["b", "c"], TP1: ["x"]})
    out, waited = linger(runner(0.3), consumer, {TP0: ["a"]}, since_last=0.0)
    assert out == {TP0: ["a", "b", "c"], TP1: ["x"]}  # in log order per partition
    assert 0.25 <= waited < 1.0
    assert consumer.asked == [99]  # never more than a batch holds


def test_a_full_batch_or_a_stop_never_waits() -> None:
    full = Consumer({TP0: ["late"]})
    out, waited = linger(runner(0.3, max_records=2), full, {TP0: ["a", "b"]}, since_last=0.0)
    assert out == {TP0: ["a", "b"]} and waited < 0.1
    stopping = Consumer()
    out, waited = linger(runner(5.0), stopping, {TP0: ["a"]}, since_last=0.0, stop=True)
    assert out == {TP0: ["a"]} and waited < 0.5


def test_a_shared_reader_keeps_only_the_partitions_it_still_holds() -> None:
    consumer = Consumer({TP1: ["moved"]})  # TP1 was handed to another node meanwhile
    out, _ = linger(runner(0.1, group="g"), consumer, {TP0: ["a"], TP1: ["b"]}, since_last=0.0)
    assert out == {TP0: ["a"]}


def test_no_linger_by_default() -> None:
    consumer = Consumer({TP0: ["late"]})
    out, waited = linger(runner(0.0), consumer, {TP0: ["a"]}, since_last=0.0)
    assert out == {TP0: ["a"]} and waited < 0.1


def test_a_projection_busy_keeping_up_never_waits() -> None:
    """Its last batch took the linger or longer: pausing it would let its lag grow."""
    consumer = Consumer({TP0: ["late"]})
    out, waited = linger(runner(0.3), consumer, {TP0: ["a"]}, since_last=0.0, took=0.4)
    assert out == {TP0: ["a"]} and waited < 0.1
    big = Consumer({TP0: ["late"]})
    out, waited = linger(runner(0.3, max_records=5000), big, {TP0: ["r"] * 1000}, since_last=0.0)
    assert len(out[TP0]) == 1000 and waited < 0.1
