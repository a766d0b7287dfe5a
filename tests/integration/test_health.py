"""Health tells the truth: /health and ``memstream status`` say "degraded", with the reason,
when an agent's input waits without its committed offsets moving, when a projection's store
fails or hangs, and "ok" again once each recovers; both answer at once."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from memstream.consumers.health import HealthMonitor
from memstream.consumers.producer import AsyncProducer, turn_event
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.projections import factory
from memstream.projections.port import ApplyStats, LogRecord, Projection
from memstream.projections.runner import ProjectionRunner
from memstream.projections.service import ProjectionService
from memstream.schemas.envelope import make_event
from memstream.schemas.events import WorkflowObserved
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess, memstream

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 9, tzinfo=UTC)
FACTS = [
    "My sister Ana lives in Porto.",
    "I had pasta for lunch with Tom.",
    "We walked the dog in the park this morning.",
]


def _turns(ns: str, first: int, n: int) -> list[Any]:
    return [
        turn_event(
            namespace=ns,
            session_id="s1",
            turn_id=f"t{i}",
            role="user",
            speaker="Maya",
            text=f"{FACTS[i % len(FACTS)]} (note {i})",
            occurred_at=T0 + timedelta(minutes=i),
        )
        for i in range(first, first + n)
    ]


def _wait_health(url: str, want: str, timeout: float, needle: str = "") -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        started = time.monotonic()
        body = httpx.get(f"{url}/health", timeout=5).json()
        assert time.monotonic() - started < 2.0  # answered from the cached probe
        if body["status"] == want and all(needle in p for p in body["problems"]):
            return body
        time.sleep(0.3)
    raise AssertionError(f"/health not {want!r} ({needle}) within {timeout:.0f}s: {body}")


def test_an_agent_that_stops_committing_while_input_waits_is_degraded_until_it_moves(
    settings: Settings, tmp_path: Path
) -> None:
    """Turns held in a session buffer (idle flush far away) keep the write path's committed
    offsets still while its input waits: after health_stall_seconds that is reported; the
    turn that fills the buffer releases them and health is ok again."""
    own = settings.with_(
        topic_prefix=f"hlth{random.randrange(10**6)}", data_dir=str(tmp_path / "data")
    )
    asyncio.run(ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions))
    worker = WorkerProcess(
        own,
        tmp_path / "w",
        projections="duckdb",
        buffer_idle_seconds="600",
        buffer_max_turns="12",
        health_stall_seconds="3",
        health_probe_seconds="0.5",
    ).start()
    try:
        url = running_worker(own.data_dir)["api_url"]  # type: ignore[index]
        _wait_health(url, "ok", 20)

        async def publish(first: int, n: int) -> None:
            async with AsyncProducer(own) as producer:
                await producer.publish_many(_turns("hlth", first, n))

        asyncio.run(publish(0, 3))
        body = _wait_health(url, "degraded", 30, needle="agent write-path")
        (problem,) = body["problems"]
        assert "stalled: 3 record(s) waiting" in problem, problem
        out = memstream(own, "status")
        assert out.returncode == 1, out.stdout + out.stderr
        line = next(x for x in out.stdout.splitlines() if "agent write-path" in x)
        assert line.startswith("DEGRADED") and "stalled" in line, out.stdout
        assert "status: degraded" in out.stdout

        asyncio.run(publish(3, 9))  # the 12th turn fills the buffer: extracted, committed
        _wait_health(url, "ok", 30)
        out = memstream(own, "status", "--json")
        assert out.returncode == 0, out.stdout + out.stderr
        report = orjson.loads(out.stdout)
        assert report["status"] == "ok" and report["problems"] == []
        names = {c["name"] for c in report["checks"]}
        assert {"broker", "projection duckdb", "agent write-path"} <= names
    finally:
        worker.stop()
    out = memstream(own, "status")  # no worker: said, and what can be told without one
    assert out.returncode == 1
    assert out.stdout.splitlines()[0].startswith("DEGRADED  worker")
    assert any(x.startswith("ok") and "projection duckdb" in x for x in out.stdout.splitlines())


class FlakyStore(Projection):
    """The real DuckDB projection behind a store that can fail (an I/O error: retried) or
    hang (a store that never answers) on demand: the faults health must report."""

    def __init__(self, inner: Projection) -> None:
        self.inner, self.name = inner, inner.name
        self.failing = False
        self.running = threading.Event()
        self.running.set()

    def positions(self) -> dict[tuple[str, int], int]:
        return self.inner.positions()

    def apply(self, records: Sequence[LogRecord]) -> ApplyStats:
        if self.failing:
            raise OSError(28, "No space left on device")
        self.running.wait()
        return self.inner.apply(records)

    def skip(self, record: LogRecord, reason: str) -> None:
        self.inner.skip(record, reason)

    def close(self) -> None:
        self.running.set()
        self.inner.close()


async def _until(monitor: HealthMonitor, want: str, needle: str, timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    report: dict[str, Any] = {}
    while time.monotonic() < deadline:
        await monitor.refresh()
        report = monitor.report()
        if report["status"] == want and all(needle in p for p in report["problems"]):
            return list(report["problems"])
        await asyncio.sleep(0.3)
    raise AssertionError(f"not {want!r} ({needle}) within {timeout:.0f}s: {report}")


async def test_a_failing_or_hung_projection_store_is_degraded_until_it_recovers(
    settings: Settings, tmp_path: Path
) -> None:
    own = settings.with_(
        topic_prefix=f"hproj{random.randrange(10**6)}",
        data_dir=str(tmp_path / "data"),
        health_stall_seconds=2.0,
    )
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    service = ProjectionService(own, [])
    store = FlakyStore(factory.build("duckdb", own))
    runner = ProjectionRunner(own.bootstrap(), factory.topics_of("duckdb", own), store)
    service.runners["duckdb"] = runner
    task = asyncio.ensure_future(service._run("duckdb", runner))
    monitor = HealthMonitor(own, service, agents=False)
    n = 0

    async def publish(count: int) -> None:
        nonlocal n
        async with AsyncProducer(own) as producer:
            for _ in range(count):
                n += 1
                await producer.publish(
                    make_event(
                        WorkflowObserved(workflow="deploy", outcome="success", detail=f"run {n}"),
                        namespace="ops",
                        occurred_at=T0,
                    )
                )

    try:
        await publish(3)
        await _until(monitor, "ok", "", 20)

        store.failing = True  # the disk fills up
        await publish(2)
        problems = await _until(monitor, "degraded", "projection duckdb", 20)
        assert "retrying since" in problems[0] and "No space left" in problems[0], problems
        store.failing = False  # space again: the retry (every 5 s) applies the batch
        await _until(monitor, "ok", "", 20)

        store.running.clear()  # the store stops answering
        await publish(2)
        problems = await _until(monitor, "degraded", "projection duckdb", 20)
        assert "stalled: 2 record(s) waiting, no progress" in problems[0], problems
        store.running.set()
        await _until(monitor, "ok", "", 20)
        _c, rows = store.inner.user_query("SELECT count(*) FROM workflows")  # type: ignore[attr-defined]
        assert rows == [(7,)]
    finally:
        store.running.set()
        service._stop.set()
        await task
        await monitor.probe.close()
        await asyncio.to_thread(runner.close)
