"""Category and tier filters reach the store's answer, through every door, with the defaults
and the rule extractor: the SDK's ``filters=``, HTTP ``"filters"`` and a RecallRequested on
the bus; a filter the worker does not know is an error naming it, never ignored."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime

import pytest

from memstream.consumers.bus_recall import recall_over_bus
from memstream.consumers.client import Memory, MemstreamError
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 9, tzinfo=UTC)
QUESTION = "tea Ana Porto"


def test_filters_keep_only_what_was_asked_for(settings: Settings, worker: WorkerProcess) -> None:
    ns = f"filters-{uuid.uuid4().hex[:8]}"
    with Memory(settings=settings) as mem:
        mem.add(
            [
                {"role": "user", "content": "I prefer green tea over coffee."},
                {"role": "user", "content": "I will call Ana about the tea order tomorrow."},
                {"role": "user", "content": "I live in Porto, near the tea shop."},
            ],
            user_id=ns,
            occurred_at=T0,
        )
        deadline = time.monotonic() + 90  # until the retrieval projection has all three
        while len({r["category"] for r in mem.recall(QUESTION, namespace=ns)["results"]}) < 3:
            assert time.monotonic() < deadline, mem.get_all(user_id=ns)
            time.sleep(0.5)
        only = mem.recall(QUESTION, namespace=ns, k=10, filters={"category": "preference"})
        assert only["results"] and {r["category"] for r in only["results"]} == {"preference"}
        assert only["filters"] == {"categories": ["preference"]}
        two = mem.search(QUESTION, user_id=ns, filters={"categories": ["preference", "fact"]})
        assert two["results"]
        assert {r["metadata"]["category"] for r in two["results"]} <= {"preference", "fact"}
        none = mem.recall(QUESTION, namespace=ns, k=10, filters={"tier": "peripheral"})
        assert none["results"] == []  # fresh memories are in the working tier
        with pytest.raises(MemstreamError) as info:
            mem.recall(QUESTION, namespace=ns, filters={"colour": "blue"})
        assert info.value.path == "filters.colour"
        with pytest.raises(MemstreamError) as info:
            mem.recall(QUESTION, namespace=ns, filters={"category": "gossip"})
        assert info.value.path == "filters.category"
    answer = asyncio.run(
        recall_over_bus(settings, ns, QUESTION, k=10, filters={"category": ["commitment"]})
    )
    hits = answer.payload.results
    assert hits and all("Ana" in h.text for h in hits), hits
    refused = asyncio.run(recall_over_bus(settings, ns, QUESTION, filters={"colour": "blue"}))
    assert refused.payload.error and "filters.colour" in refused.payload.error
