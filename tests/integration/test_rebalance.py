"""Two workers in one consumer group; one stops mid-stream and the other takes over its
partitions: no turn lost, no memory duplicated, projections equal a rebuild."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

from bench.eval_data import load_conversations
from memstream.consumers.kafka_read import read_topic
from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.topics import BY_ROLE
from memstream.streams.status import read_status
from tests.harness import WorkerProcess, turn_from_row


async def all_memory_events(s: Settings) -> list[object]:
    topic = BY_ROLE["memory_log"].name(s.topic_prefix)
    return [decode(r.value) async for r in read_topic(s.bootstrap(), topic)]


async def test_rebalance_loses_and_duplicates_nothing(settings: Settings, tmp_path: Path) -> None:
    own = settings.with_(
        topic_prefix="msrebal", data_dir=str(tmp_path / "a-data"), projections="none"
    )
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    turns = load_conversations()[:250]
    a = WorkerProcess(own, tmp_path / "a", projections="none").start()
    b = WorkerProcess(
        own.with_(data_dir=str(tmp_path / "b-data")), tmp_path / "b", projections="none"
    ).start()
    try:
        async with AsyncProducer(own) as p:
            envs = [turn_from_row(t) for t in turns]
            await p.publish_many(envs[:120])
            await asyncio.sleep(1.0)
            held = [
                tp for tp in (read_status(a.datadir) or {}).get("assigned", []) if ".turns:" in tp
            ]
            assert held, "worker a should hold turn partitions before it stops"
            a.stop()  # mid-stream: b takes over a's partitions
            await p.publish_many(envs[120:])
        deadline = time.monotonic() + 90
        while True:
            log = await all_memory_events(own)
            covered = Counter(
                t.turn_id for e in log if e.type == "TurnsExtracted" for t in e.payload.turns
            )
            if len(covered) >= len(turns) or time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
    finally:
        a.stop()
        b.stop()
    assert set(covered) == {t["turn_id"] for t in turns}  # no turn lost
    created = Counter(
        (e.namespace, e.payload.content_hash) for e in log if e.type == "MemoryCreated"
    )
    assert [k for k, n in created.items() if n > 1] == []  # no memory created twice
