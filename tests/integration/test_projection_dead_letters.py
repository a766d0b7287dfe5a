"""A record a projection cannot apply never stalls it: the record goes to the dead-letter
topic with its reason and original bytes, the projection steps over it and goes on for
every tenant, and /health says what happened. And the poison query that once did this
(a stopword-only search, then a restart) is harmless end to end, next to a real poison
record that the worker dead-letters."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import httpx
import orjson
import pytest

from memstream.consumers.client import Memory
from memstream.consumers.kafka_read import read_topic
from memstream.consumers.producer import AsyncProducer, Producer
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.projections import factory
from memstream.projections.port import ApplyStats, LogRecord, Projection
from memstream.projections.runner import ProjectionRunner
from memstream.projections.service import ProjectionService
from memstream.schemas.envelope import make_event
from memstream.schemas.events import WorkflowObserved
from memstream.schemas.topics import BY_ROLE
from memstream.streams.deadletter import DeadLetter, decode_dead_letter
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 9, tzinfo=UTC)


class Poisoned(Projection):
    """The real DuckDB projection, failing on records that carry a marker (the fault)."""

    def __init__(self, inner: Projection) -> None:
        self.inner, self.name = inner, inner.name

    def positions(self) -> dict[tuple[str, int], int]:
        return self.inner.positions()

    def apply(self, records: Sequence[LogRecord]) -> ApplyStats:
        if any(b"POISON" in r.value for r in records):
            raise ZeroDivisionError("division by zero")
        return self.inner.apply(records)

    def skip(self, record: LogRecord, reason: str) -> None:
        self.inner.skip(record, reason)

    def close(self) -> None:
        self.inner.close()


def test_a_record_that_cannot_be_applied_is_dead_lettered_and_the_rest_land(
    settings: Settings, tmp_path: Path
) -> None:
    own = settings.with_(
        topic_prefix=f"poison{random.randrange(10**6)}", data_dir=str(tmp_path / "data")
    )

    async def scenario() -> None:
        await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
        details = ["fine 1", "POISON", "fine 2", "fine 3"]
        async with AsyncProducer(own) as producer:
            for i, detail in enumerate(details):
                await producer.publish(
                    make_event(
                        WorkflowObserved(workflow="w", outcome="success", detail=detail),
                        namespace=f"tenant-{i % 2}",
                        occurred_at=T0,
                    )
                )
        service = ProjectionService(own, [])
        duck = factory.build("duckdb", own)
        runner = ProjectionRunner(
            own.bootstrap(),
            factory.topics_of("duckdb", own),
            Poisoned(duck),
            dead_letter=lambda reason, record: service._dead_letter("duckdb", reason, record),
        )
        service.runners["duckdb"] = runner
        try:
            await runner.catch_up(timeout=20)
            _c, rows = duck.user_query("SELECT detail FROM workflows ORDER BY detail")  # type: ignore[attr-defined]
            assert [r[0] for r in rows] == ["fine 1", "fine 2", "fine 3"]
            _c, rejects = duck.user_query("SELECT reason, original FROM projection_rejects")  # type: ignore[attr-defined]
            assert len(rejects) == 1 and "ZeroDivisionError" in rejects[0][0]
            assert b"POISON" in rejects[0][1]
            # the position moved past it: a restart does not meet it again
            again = ProjectionRunner(
                own.bootstrap(), factory.topics_of("duckdb", own), Poisoned(duck)
            )
            assert (await again.catch_up(timeout=20)).records == 0
            assert runner.health.dead_lettered == 1
            assert any("dead-lettered 1 record" in p for p in service.problems())
        finally:
            if service._dlq_producer is not None:
                await service._dlq_producer.stop()
            duck.close()
        letters = [
            decode_dead_letter(r.value)
            async for r in read_topic(own.bootstrap(), BY_ROLE["dlq"].name(own.topic_prefix))
        ]
        assert len(letters) == 1
        (dl,) = letters
        assert dl.reason == "projection_error" and dl.agent == "projection:duckdb"
        assert "ZeroDivisionError" in dl.message and b"POISON" in dl.original

    asyncio.run(scenario())


def _sql(api_url: str, query: str) -> list[list[object]]:
    response = httpx.post(f"{api_url}/sql", json={"sql": query}, timeout=10)
    assert response.status_code == 200, response.text
    return list(response.json()["rows"])


async def _dead_letters(s: Settings) -> list[DeadLetter]:
    topic = BY_ROLE["dlq"].name(s.topic_prefix)
    return [decode_dead_letter(r.value) async for r in read_topic(s.bootstrap(), topic)]


def _searches(api_url: str, ns: str) -> int:
    response = httpx.post(
        f"{api_url}/sql",
        json={"sql": f"SELECT count(*) FROM searches WHERE namespace = '{ns}'"},
        timeout=10,
    )
    return int(response.json()["rows"][0][0])


def test_a_stopword_search_then_a_restart_keeps_every_tenant_current(
    settings: Settings, tmp_path: Path
) -> None:
    own = settings.with_(
        topic_prefix=f"stopq{random.randrange(10**6)}", data_dir=str(tmp_path / "data")
    )
    worker = WorkerProcess(own, tmp_path / "w").start()
    a, b = "stop-a", "stop-b"
    try:
        with Memory(settings=own) as mem:
            for ns in (a, b):
                mem.add("I rotate the kafka keys every month.", user_id=ns, occurred_at=T0)
            mem.search("where", user_id=a)  # all stopwords: no topic words
            api = running_worker(own.data_dir)
            assert api is not None
            deadline = time.monotonic() + 30
            while _searches(api["api_url"], a) < 1 and time.monotonic() < deadline:
                time.sleep(0.3)
        # a real poison, no fault injected: valid for the agents, but one memory named twice
        # breaks the DuckDB access_hits key (event_id, memory_id)
        with Producer(own) as producer:
            poison_id = producer.access(
                namespace=a,
                query_id="q-poison",
                memories=[("m1", 0.5), ("m1", 0.4)],
                query="which kafka version",
                occurred_at=T0,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            health = httpx.get(f"{api['api_url']}/health", timeout=5).json()
            if health["projections"]["duckdb"]["dead_lettered"]:
                break
            time.sleep(0.3)
        assert health["projections"]["duckdb"]["dead_lettered"] == 1, health
        assert health["status"] == "degraded"
        worker.stop()
        worker = WorkerProcess(own, tmp_path / "w").start()
        api = running_worker(own.data_dir)
        assert api is not None
        with Memory(settings=own) as mem:
            mem.search("kafka key rotation", user_id=a)
            mem.search("kafka key rotation", user_id=b)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if _searches(api["api_url"], a) >= 2 and _searches(api["api_url"], b) >= 1:
                break
            time.sleep(0.3)
        assert _searches(api["api_url"], a) == 2 and _searches(api["api_url"], b) == 1
        health = httpx.get(f"{api['api_url']}/health", timeout=5).json()
        assert health["status"] == "ok", health
        # the poison: on the dead-letter topic with its reason and bytes, kept as a reject at
        # its position, nothing of it applied
        letters = asyncio.run(_dead_letters(own))
        assert [(d.agent, d.reason) for d in letters] == [("projection:duckdb", "projection_error")]
        assert "ConstraintException" in letters[0].message
        assert orjson.loads(letters[0].original)["event_id"] == poison_id
        rejects = _sql(api["api_url"], "SELECT log_offset, reason FROM projection_rejects")
        assert len(rejects) == 1 and rejects[0][0] == letters[0].offset
        assert "duplicate key" in rejects[0][1]
        assert _sql(
            api["api_url"], f"SELECT count(*) FROM access_hits WHERE event_id = '{poison_id}'"
        ) == [[0]]
    finally:
        worker.stop()
