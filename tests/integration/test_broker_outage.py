"""Broker unavailable: the broker stops answering for longer than every client timeout and
then comes back. Producers fail clearly within a stated bound, the running worker resumes
by itself (the same process, no restart), and every acknowledged turn is extracted exactly
once. /health says "degraded" (broker unreachable) during the outage, and "ok" after.

How the outage is made: the bundled Tansu build stores only in memory (``file://``,
``sqlite://`` and ``postgres://`` are rejected, ``s3://`` needs an object store), so a
stopped broker would come back empty and prove nothing about acknowledged data. The broker
process is frozen with SIGSTOP and thawed with SIGCONT instead (``EmbeddedBroker.pause`` /
``resume``): its sockets stay open and nothing is answered, as when the broker host hangs
or the network to it is partitioned. The outage lasts longer than the group session
timeout (the worker's membership expires) and the producer's delivery timeout. Not covered:
a broker that loses its storage, and connections refused by a broker that is down.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from memstream.consumers.producer import AsyncProducer, Producer, PublishError
from memstream.infra.broker import EmbeddedBroker
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.topics import BY_ROLE
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess
from tests.reliability.driver import LogTail, workload

OUTAGE_S = 12.0  # > broker_session_timeout (6 s) and > the producer's delivery timeout
DELIVERY_TIMEOUT_MS = 4000


async def _health_until(api: str, want: str, needle: str, timeout: float) -> dict[str, Any]:
    """/health of the worker until it says ``want`` (each answer within 2 s)."""
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=api, timeout=5) as http:
        while time.monotonic() < deadline:
            started = time.monotonic()
            body = (await http.get("/health")).json()
            assert time.monotonic() - started < 2.0, "/health waited for the broker"
            if body["status"] == want and all(needle in p for p in body["problems"]):
                return body
            await asyncio.sleep(0.3)
    raise AssertionError(f"/health not {want!r} ({needle}) within {timeout:.0f}s: {body}")


async def test_producers_fail_clearly_and_the_worker_resumes_after_an_outage(
    tmp_path: Path,
) -> None:
    broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()  # its own: it is frozen
    worker: WorkerProcess | None = None
    tail: LogTail | None = None
    try:
        s = Settings(
            kafka_bootstrap=broker.bootstrap,
            topic_prefix="msoutage",
            data_dir=str(tmp_path / "data"),
            partitions=2,
            buffer_idle_seconds=1.0,
            projections="none",
        )
        await ensure_topics(s.bootstrap(), s.topic_prefix, s.partitions)
        worker = WorkerProcess(s, tmp_path / "worker", projections="none").start()
        assert worker.proc is not None
        pid = worker.proc.pid
        envs = workload(200, s)
        acked: set[str] = set()
        tail = await LogTail(s.bootstrap(), BY_ROLE["memory_log"].name(s.topic_prefix)).start()
        records: list[Any] = []
        async with AsyncProducer(
            s, delivery_timeout_ms=DELIVERY_TIMEOUT_MS, request_timeout_ms=3000
        ) as producer:
            acked.update(await producer.publish_many(envs[:60]))
            deadline = time.monotonic() + 30
            while not records and time.monotonic() < deadline:  # the worker is extracting
                records.extend(await tail.poll())
            assert records, "the worker extracted nothing before the outage"
            acked.update(await producer.publish_many(envs[60:100]))
            broker.pause()  # the worker is mid-stream: turns in its buffers, events in flight
            paused = time.monotonic()

            for batch in (envs[100:120], envs[120:140]):  # the second one finds no metadata
                started = time.monotonic()
                with pytest.raises(PublishError, match=f"Kafka at {broker.bootstrap}"):
                    await producer.publish_many(batch)
                assert time.monotonic() - started < DELIVERY_TIMEOUT_MS / 1000 + 2.0

            def sync_producer() -> None:  # the sync facade: its start is bounded too
                with Producer(s, delivery_timeout_ms=DELIVERY_TIMEOUT_MS) as p:
                    p.publish_many(envs[140:150])

            started = time.monotonic()
            with pytest.raises(PublishError, match=f"cannot reach Kafka at {broker.bootstrap}"):
                await asyncio.to_thread(sync_producer)
            assert time.monotonic() - started < DELIVERY_TIMEOUT_MS / 1000 + 2.0

            # health says so, at once, while the broker does not answer
            api = running_worker(s.data_dir)["api_url"]  # type: ignore[index]
            health = await _health_until(api, "degraded", "broker: unreachable", 8.0)
            assert f"at {broker.bootstrap}" in health["problems"][0]

            await asyncio.sleep(max(0.0, OUTAGE_S - (time.monotonic() - paused)))
            broker.resume()
            # The failed batches may or may not be stored: publishing them again is safe.
            acked.update(await producer.publish_many(envs[100:]))
        assert acked == {e.event_id for e in envs}

        wanted = {(e.namespace, e.payload.turn_id) for e in envs}
        heads: dict[str, list[tuple[str, str]]] = {}
        created: Counter[tuple[str, str]] = Counter()
        seen: set[str] = set()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            records.extend(await tail.poll())
            for record in records:
                env = decode(record.value)
                if env.event_id in seen:
                    continue  # a repeated record (same id): consumers drop it
                seen.add(env.event_id)
                if env.type == "TurnsExtracted":
                    heads[env.event_id] = [(env.namespace, t.turn_id) for t in env.payload.turns]
                elif env.type == "MemoryCreated":
                    created[(env.namespace, env.payload.content_hash)] += 1
            records.clear()
            if wanted <= {t for turns in heads.values() for t in turns}:
                break
            await asyncio.sleep(1.0)
        covered = Counter(t for turns in heads.values() for t in turns)
        assert sorted(wanted - set(covered)) == []  # every acknowledged turn extracted
        assert [t for t, n in covered.items() if n > 1] == []  # and only once
        assert [k for k, n in created.items() if n > 1] == []  # no memory created twice
        assert worker.proc.poll() is None and worker.proc.pid == pid  # it resumed by itself
        await _health_until(api, "ok", "", 30.0)
    finally:
        if tail is not None:
            await tail.stop()
        if worker is not None:
            worker.stop()
        broker.stop()
