"""Project nodes sharing a Qdrant server split the memory log's partitions through consumer
group ``<prefix>-project-qdrant`` (projections/runner.py, ``group``): while two readers run,
each holds its own partitions; when one stops, the other takes its partitions over from the
checkpoints in the shared collection, so nothing is skipped or applied twice.

Two Qdrant projections write one collection through the server adapter
(``ServerRetrievalStore``) on qdrant-client's local mode, the stand-in for a server used by
the contract tests (no Qdrant server on the test machines); the runners, the consumer group
and the broker are the real ones."""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import ClassVar

from aiokafka import AIOKafkaProducer

from memstream.core.embedding import HashingEmbedder
from memstream.core.sparse import BM25Encoder
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics, topic_names
from memstream.projections.port import ApplyStats, LogRecord
from memstream.projections.qdrant_projection import QdrantProjection
from memstream.projections.retrieval import CollectionSpec
from memstream.projections.retrieval.server import ServerRetrievalStore
from memstream.projections.runner import ProjectionRunner
from memstream.projections.service import projection_group
from memstream.schemas import MemoryCreated, encode, make_event

NS = "shared"
T0 = datetime(2024, 3, 1, tzinfo=UTC)


class Node(QdrantProjection):
    """The Qdrant projection of one project node, noting what it applied."""

    applied: ClassVar[list[tuple[str, int, int]]] = []  # (node, partition, offset), any node

    def __init__(self, node: str, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.node = node

    def apply(self, records: Sequence[LogRecord]) -> ApplyStats:
        stats = super().apply(records)
        Node.applied.extend((self.node, r.partition, r.offset) for r in records)
        return stats


def memory(i: int) -> bytes:
    text = f"Memory number {i} is about topic {i % 7}."
    return encode(
        make_event(
            MemoryCreated(
                memory_id=f"m{i:04d}",
                text=text,
                category="fact",
                content_hash=hashlib.sha256(text.encode()).hexdigest(),
            ),
            namespace=NS,
            occurred_at=T0,
        )
    )


async def _until(check: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.1)


async def test_project_nodes_share_partitions_and_hand_them_over(settings: Settings) -> None:
    own = settings.with_(topic_prefix=f"msgroup{random.randrange(10**6)}")
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    topic = topic_names(own.topic_prefix)["memory_log"]
    emb, sparse = HashingEmbedder(), BM25Encoder()
    server = ServerRetrievalStore(CollectionSpec.for_models(emb, sparse), path=":memory:")
    Node.applied = []
    # one thread for both: the local-mode client stands in for a server, not for its locking
    executor = ThreadPoolExecutor(1)
    runners = {
        n: ProjectionRunner(
            own.bootstrap(),
            [topic],
            Node(
                n,
                ServerRetrievalStore(server.spec, client=server.client),
                topic,
                emb,
                sparse,
                partitions=own.partitions,
            ),
            group=projection_group(own, "qdrant"),
            executor=executor,
        )
        for n in ("a", "b")
    }
    sent = 0
    producer = AIOKafkaProducer(bootstrap_servers=own.bootstrap(), acks="all")

    async def produce(n: int) -> None:
        nonlocal sent
        for _ in range(n):
            await producer.send_and_wait(
                topic, memory(sent), key=NS.encode(), partition=sent % own.partitions
            )
            sent += 1

    def covered() -> bool:
        return len({(p, o) for _n, p, o in Node.applied}) == sent

    stops = {n: asyncio.Event() for n in runners}
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
        assert {n for n, _p, _o in Node.applied[-20:]} == {"a", "b"}  # both did part of it

        stops["b"].set()  # node b leaves: a takes its partitions from the shared checkpoints
        await tasks["b"]
        await produce(20)
        await _until(covered, 30, "node a never took node b's partitions over")
        assert len(runners["a"].applied_to) == own.partitions
        twice = [k for k, n in Counter((p, o) for _n, p, o in Node.applied).items() if n > 1]
        assert twice == []
        assert sorted(p.memory_id for p in server.all(NS)) == [f"m{i:04d}" for i in range(sent)]
    finally:
        for stop in stops.values():
            stop.set()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        await producer.stop()
        executor.shutdown(wait=False)
