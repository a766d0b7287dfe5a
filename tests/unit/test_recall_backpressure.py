"""Recalls run on a bounded pool: at most ``threads`` at once, ``max_pending`` more queued;
past that HTTP answers 429 with Retry-After and the Kafka responder waits for a slot."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from memstream.consumers.http_api import ApiService
from memstream.consumers.recall import RecallService
from memstream.consumers.recall_pool import RecallBusy, RecallPool
from memstream.core.embedding import HashingEmbedder
from memstream.core.sparse import BM25Encoder
from memstream.infra.settings import Settings
from memstream.projections.retrieval import CollectionSpec, EdgeRetrievalStore


def _blocker(gate: threading.Event, started: threading.Semaphore) -> object:
    def run() -> str:
        started.release()
        gate.wait(10)
        return "done"

    return run


async def _fill(pool: RecallPool, gate: threading.Event) -> list[asyncio.Task[str]]:
    """Take every slot: ``threads`` running, ``max_pending`` queued behind them."""
    started = threading.Semaphore(0)
    tasks = [
        asyncio.ensure_future(pool.run(_blocker(gate, started)))  # type: ignore[arg-type]
        for _ in range(pool.slots)
    ]
    for _ in range(pool.threads):
        await asyncio.to_thread(started.acquire, True, 5)
    await asyncio.sleep(0)
    assert pool.admitted == pool.slots
    return tasks


async def test_a_full_pool_refuses_with_a_retry_time_and_recovers() -> None:
    pool, gate = RecallPool(threads=2, max_pending=3), threading.Event()
    tasks = await _fill(pool, gate)
    with pytest.raises(RecallBusy) as busy:
        await pool.run(lambda: "late")
    assert busy.value.retry_after >= 1
    assert pool.rejected == 1
    gate.set()
    assert await asyncio.gather(*tasks) == ["done"] * 5
    assert pool.admitted == 0
    assert await pool.run(lambda: "again") == "again"  # room again once the queue drained
    pool.close()


async def test_waiting_callers_queue_instead_of_failing() -> None:
    pool, gate = RecallPool(threads=1, max_pending=0), threading.Event()
    tasks = await _fill(pool, gate)
    waiting = asyncio.ensure_future(pool.run(lambda: "waited", wait=True))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # queued behind the running one, not refused
    gate.set()
    assert await waiting == "waited"
    await asyncio.gather(*tasks)
    pool.close()


def test_bad_pool_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="recall_threads"):
        RecallPool(threads=0)


async def test_http_recall_answers_429_with_retry_after_when_the_queue_is_full(
    tmp_path: Path,
) -> None:
    """The worker's own route, a real (empty) Qdrant edge store behind it."""
    emb, sparse = HashingEmbedder(), BM25Encoder()
    store = EdgeRetrievalStore(str(tmp_path / "qdrant"), CollectionSpec.for_models(emb, sparse))
    pool, gate = RecallPool(threads=1, max_pending=1), threading.Event()
    api = ApiService(Settings(kafka_bootstrap="127.0.0.1:9"), "127.0.0.1", 0)
    api._recall = RecallService(store, emb, sparse, pool=pool)
    tasks = await _fill(pool, gate)
    async with TestClient(TestServer(api.web)) as client:
        body = {"namespace": "acme", "query": "where does Ana live?"}
        for route in ("/v1/recall", "/v1/memories/search"):
            r = await client.post(route, json=body)
            assert r.status == 429, await r.text()
            assert int(r.headers["Retry-After"]) >= 1
            assert (await r.json())["error"]["code"] == "too_many_recalls"
        gate.set()
        await asyncio.gather(*tasks)
        r = await client.post("/v1/recall", json=body)
        # admitted again (it then fails to publish its telemetry: no broker in a unit test)
        assert r.status != 429, await r.text()
    pool.close()
