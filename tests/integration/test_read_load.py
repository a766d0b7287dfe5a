"""Reads never starve the write path: a steady recall load during a worker restart and the
catch-up that follows, and the backlog still becomes memories.

Every recall publishes ``MemoryAccessed``; a restarted worker folds the access topic into
its partition state before the write path may go on. That fold used to follow the topic
until it was quiet, which a steady recall load never lets happen, so the backlog waited for
the recalls to stop. Now it reads to the log end it found when it started, and recalls run
on a bounded pool of their own (``recall_threads``, ``recall_max_pending``).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.topics import BY_ROLE
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess
from tests.reliability.driver import LogTail, workload

RECALL_EVERY_S = 0.2
QUERIES = ("what does she prefer?", "where does he live?", "which job did they decide on?")


class RecallLoad:
    """One recall every ``RECALL_EVERY_S`` against whatever worker of ``data_dir`` runs."""

    def __init__(self, data_dir: str, namespaces: list[str]) -> None:
        self.data_dir, self.namespaces = data_dir, namespaces
        self.outcomes: Counter[str] = Counter()
        self.stopped = asyncio.Event()

    async def run(self) -> None:
        async with httpx.AsyncClient(timeout=5.0) as client:
            i = 0
            while not self.stopped.is_set():
                i += 1
                info = running_worker(self.data_dir)
                if info is None:
                    self.outcomes["no worker"] += 1
                else:
                    body = {
                        "namespace": self.namespaces[i % len(self.namespaces)],
                        "query": QUERIES[i % len(QUERIES)],
                    }
                    try:
                        r = await client.post(f"{info['api_url']}/v1/recall", json=body)
                        self.outcomes[str(r.status_code)] += 1
                    except httpx.HTTPError:
                        self.outcomes["unreachable"] += 1
                await asyncio.sleep(RECALL_EVERY_S)


async def _covered(tail: LogTail, covered: set[tuple[str, str]]) -> None:
    for r in await tail.poll():
        env = decode(r.value)
        if env.type == "TurnsExtracted":
            covered.update((env.namespace, t.turn_id) for t in env.payload.turns)


async def test_backlog_becomes_memories_under_steady_recall_load(
    settings: Settings, tmp_path: Path
) -> None:
    defaults = Settings()
    own = settings.with_(
        topic_prefix=f"msread{uuid.uuid4().hex[:8]}",
        data_dir=str(tmp_path / "data"),
        buffer_idle_seconds=defaults.buffer_idle_seconds,  # the defaults, not the suite's 1 s
        buffer_max_turns=defaults.buffer_max_turns,
    )
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    backlog = workload(240, own)
    namespaces = sorted({e.namespace for e in backlog})
    worker = WorkerProcess(own, tmp_path / "worker", projections="duckdb,qdrant")
    tail = await LogTail(own.bootstrap(), BY_ROLE["memory_log"].name(own.topic_prefix)).start()
    # one tenant: its access partition gets a record every 0.2 s, never quiet for long
    load = RecallLoad(own.data_dir, namespaces[:1])
    load_task: asyncio.Task[Any] | None = None
    covered: set[tuple[str, str]] = set()
    try:
        await asyncio.to_thread(worker.start, 90.0)
        load_task = asyncio.ensure_future(load.run())
        await asyncio.sleep(2.0)  # recalls (each one a MemoryAccessed) are flowing
        assert load.outcomes["200"] >= 3, dict(load.outcomes)
        worker.kill()
        async with AsyncProducer(own, producer_name="read-load") as producer:
            await producer.publish_many(backlog)  # the backlog waits on the topic
        restarted = time.monotonic()
        await asyncio.to_thread(worker.start, 90.0)
        answered_before = load.outcomes["200"]

        wanted = {(e.namespace, e.payload.turn_id) for e in backlog}
        deadline = time.monotonic() + 60
        while wanted - covered and time.monotonic() < deadline:
            await _covered(tail, covered)
            await asyncio.sleep(0.5)
        caught_up = time.monotonic() - restarted
        answered_during = load.outcomes["200"] - answered_before
        missing = wanted - covered
        assert not missing, (
            f"{len(missing)} of {len(wanted)} backlog turns not extracted {caught_up:.0f}s after "
            f"the restart under recall load ({dict(load.outcomes)}), e.g. {sorted(missing)[:3]}"
        )
        # the load really ran through the restart and the catch-up
        assert answered_during >= 5, dict(load.outcomes)
        assert load.outcomes["500"] == 0, dict(load.outcomes)
        print(
            f"backlog extracted {caught_up:.1f}s after the restart; recalls {dict(load.outcomes)}"
        )
    finally:
        load.stopped.set()
        if load_task is not None:
            await load_task
        worker.stop()
        await tail.stop()
