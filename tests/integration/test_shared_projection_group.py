"""Project nodes sharing a store (a Qdrant server) split the memory log's partitions through
consumer group ``<prefix>-project-qdrant`` (projections/runner.py, ``group``): while two
readers run, each holds its own partitions; when one stops, the other takes its partitions
over from the positions the shared store recorded, so nothing is skipped or applied twice.

The shared store is an in-memory stand-in here (no Qdrant server on the test machines);
the runner, the group and the broker are the real ones."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Sequence

from aiokafka import AIOKafkaProducer

from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics, topic_names
from memstream.projections.port import ApplyStats, LogRecord, Projection
from memstream.projections.runner import ProjectionRunner
from memstream.projections.service import projection_group


class SharedStore:
    """What the nodes share: the applied records and each partition's next offset."""

    def __init__(self) -> None:
        self.positions: dict[tuple[str, int], int] = {}
        self.applied: list[tuple[str, int, int]] = []  # (node, partition, offset)


class NodeView(Projection):
    name = "qdrant"

    def __init__(self, store: SharedStore, node: str) -> None:
        self.store, self.node = store, node

    def positions(self) -> dict[tuple[str, int], int]:
        return dict(self.store.positions)

    def apply(self, records: Sequence[LogRecord]) -> ApplyStats:
        for r in records:
            self.store.applied.append((self.node, r.partition, r.offset))
            self.store.positions[(r.topic, r.partition)] = r.offset + 1
        return ApplyStats(records=len(records), applied=len(records))

    def skip(self, record: LogRecord, reason: str) -> None:
        self.store.positions[(record.topic, record.partition)] = record.offset + 1


async def _until(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.1)


async def test_project_nodes_share_partitions_and_hand_them_over(settings: Settings) -> None:
    own = settings.with_(topic_prefix=f"msgroup{random.randrange(10**6)}")
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    topic = topic_names(own.topic_prefix)["memory_log"]
    store = SharedStore()
    group = projection_group(own, "qdrant")
    sent = 0
    producer = AIOKafkaProducer(bootstrap_servers=own.bootstrap(), acks="all")

    async def produce(n: int) -> None:
        nonlocal sent
        for _ in range(n):
            await producer.send_and_wait(topic, b"x", partition=sent % own.partitions)
            sent += 1

    def covered() -> bool:
        return len({(p, o) for _n, p, o in store.applied}) == sent

    stops = {n: asyncio.Event() for n in ("a", "b")}
    runners = {
        n: ProjectionRunner(own.bootstrap(), [topic], NodeView(store, n), group=group)
        for n in ("a", "b")
    }
    tasks = {}
    await producer.start()
    try:
        await produce(20)
        tasks["a"] = asyncio.ensure_future(runners["a"].run(stops["a"]))
        await _until(covered, 30, "node a alone never applied the log")
        assert len(runners["a"].applied_to) == own.partitions  # alone, it holds them all

        tasks["b"] = asyncio.ensure_future(runners["b"].run(stops["b"]))
        await _until(
            lambda: runners["b"].applied_to and len(runners["a"].applied_to) < own.partitions,
            30,
            "the partitions were never split",
        )
        a, b = set(runners["a"].applied_to), set(runners["b"].applied_to)
        assert not a & b and len(a | b) == own.partitions
        await produce(20)
        await _until(covered, 30, "the split nodes never applied the new records")
        split = {n for n, _p, o in store.applied[-20:]}
        assert split == {"a", "b"}  # both nodes did part of the work

        stops["b"].set()  # node b leaves: a takes its partitions from the shared positions
        await tasks["b"]
        await produce(20)
        await _until(covered, 30, "node a never took node b's partitions over")
        assert len(runners["a"].applied_to) == own.partitions
        twice = [k for k, n in Counter((p, o) for _n, p, o in store.applied).items() if n > 1]
        assert twice == []
    finally:
        for stop in stops.values():
            stop.set()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        await producer.stop()
        for r in runners.values():
            r.executor.shutdown(wait=False)
