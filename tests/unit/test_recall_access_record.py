"""A recall's ``MemoryAccessed`` is sent after the answer: the caller does not wait for the
broker's acknowledgement, what must be known at once (the query id feedback may name) is
done before the answer, a record that cannot be sent is counted and logged, and ``drain``
waits for the records still being sent (the worker's API drains before its producer stops)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from pathlib import Path

import pytest

from memstream.consumers.recall import RecallService
from memstream.core.embedding import HashingEmbedder
from memstream.core.sparse import BM25Encoder
from memstream.projections.retrieval import CollectionSpec, EdgeRetrievalStore


def _service(tmp_path: Path, publish: object) -> RecallService:
    emb, sparse = HashingEmbedder(), BM25Encoder()
    store = EdgeRetrievalStore(str(tmp_path / "qdrant"), CollectionSpec.for_models(emb, sparse))
    return RecallService(store, emb, sparse, publish=publish)  # type: ignore[arg-type]


async def test_the_answer_does_not_wait_for_the_access_record(tmp_path: Path) -> None:
    noted: list[str] = []
    acknowledged = asyncio.Event()

    async def send() -> None:
        await acknowledged.wait()

    def publish(
        ns: str, query_id: str, query: str, hits: object, at: datetime, top: float
    ) -> object:
        noted.append(query_id)  # done when the answer is ready
        return send()

    service = _service(tmp_path, publish)
    result = await asyncio.wait_for(service.recall("acme", "where does Ana live?"), 10)
    assert noted == [result.query_id]
    drained = asyncio.ensure_future(service.access.drain())
    await asyncio.sleep(0.05)
    assert not drained.done()  # the record is still on its way
    acknowledged.set()
    await asyncio.wait_for(drained, 5)
    assert service.access.failed == 0
    service.pool.close()


async def test_a_record_that_cannot_be_sent_is_counted_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def send() -> None:
        raise ConnectionError("broker unreachable")

    service = _service(tmp_path, lambda *_: send())
    with caplog.at_level(logging.WARNING, logger="memstream.consumers.after_answer"):
        result = await service.recall("acme", "where does Ana live?")
        await service.access.drain()
    assert result.query_id and service.access.failed == 1
    assert "broker unreachable" in caplog.text
    service.pool.close()
