"""A scripted story of recalls and feedback through the real broker: the exact Q trajectory,
co-activation reinforcements, and a re-delivered feedback that changes nothing."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer

from memstream.consumers.client import Memory
from memstream.consumers.kafka_read import read_topic
from memstream.core.qlearning import credit_weight
from memstream.infra.settings import Settings
from memstream.schemas.topics import BY_ROLE
from tests.harness import WorkerProcess
from tests.integration.test_write_path import memory_log

T0 = datetime(2024, 2, 1, 9, tzinfo=UTC)


def q_events(settings: Settings, ns: str) -> list[Any]:
    return [e for e in asyncio.run(memory_log(settings, ns)) if e.type == "QValueUpdated"]


def wait_q(settings: Settings, ns: str, n: int, timeout: float = 30.0) -> list[Any]:
    deadline = time.monotonic() + timeout
    while True:
        events = q_events(settings, ns)
        if len(events) >= n or time.monotonic() > deadline:
            return events
        time.sleep(0.3)


def test_q_trajectory_coactivation_and_redelivery(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"story-{uuid.uuid4().hex[:8]}"
    with Memory(settings=settings) as mem:
        mem.add(
            [
                "I drink green tea every morning.",
                "My favorite tea shop is in Kyoto.",
                "I brew tea at 80 degrees.",
            ],
            user_id=ns,
            occurred_at=T0,
        )
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            hits = mem.recall("what tea do I drink", namespace=ns, k=3)
            if len(hits["results"]) == 3:
                break
            time.sleep(0.5)
        ranked = [r["memory_id"] for r in hits["results"]]
        assert len(ranked) == 3
        mem.feedback(hits["query_id"], "positive", namespace=ns, is_query=True)
        first = wait_q(settings, ns, 3)
        by_id = {e.payload.memory_id: e.payload for e in first}
        for rank, mid in enumerate(ranked, start=1):
            w = credit_weight(rank, 3)
            assert by_id[mid].weight == pytest.approx(w)
            assert by_id[mid].new_q == pytest.approx(0.5 + 0.1 * w * (1.0 - 0.5), abs=1e-6)
        top = ranked[0]
        mem.feedback(top, "very_negative", namespace=ns)
        second = wait_q(settings, ns, 4)
        last = [e.payload for e in second if e.payload.memory_id == top][-1]
        assert last.alpha == pytest.approx(0.2)  # a larger step for very_negative
        assert last.new_q == pytest.approx(by_id[top].new_q * 0.8, abs=1e-6)

    log = asyncio.run(memory_log(settings, ns))
    co = [e for e in log if e.type == "MemoryReinforced" and e.payload.reason == "coactivation"]
    assert {e.payload.memory_id for e in co} >= set(ranked)  # returned together: each reinforced
    assert all(
        e.payload.stability_after == pytest.approx(e.payload.stability_before * 1.02) for e in co
    )

    # re-deliver every feedback record byte for byte: nothing changes
    feedback = [r for r in asyncio.run(_records(settings, "feedback")) if r.key == ns.encode()]

    async def republish() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap(), acks="all")
        await producer.start()
        try:
            for r in feedback:
                await producer.send_and_wait(r.topic, r.value, key=r.key)
        finally:
            await producer.stop()

    asyncio.run(republish())
    time.sleep(3.0)
    assert len(q_events(settings, ns)) == 4


def test_a_burst_of_recalls_strengthens_once(settings: Settings, worker: WorkerProcess) -> None:
    """Recalled together again and again within the hour, memories are strengthened once
    (the spacing effect): massed repetition no longer compounds their stability, and a
    recall an hour away from the others strengthens them again."""
    ns = f"burst-{uuid.uuid4().hex[:8]}"
    now = datetime.now(UTC)
    query = "what tea do I drink"
    with Memory(settings=settings) as mem:
        mem.add(
            ["I drink green tea every morning.", "My favorite tea shop is in Kyoto."],
            user_id=ns,
            occurred_at=now - timedelta(hours=3),
        )
        deadline = time.monotonic() + 45
        while len(mem.recall(query, namespace=ns, k=2)["results"]) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.5)
        for _ in range(5):
            mem.recall(query, namespace=ns, k=2)
        # the same question in the conversation's own time, two hours before the burst
        spaced = mem.recall(query, namespace=ns, k=2, filters={"at": now - timedelta(hours=2)})
    ids = {r["memory_id"] for r in spaced["results"]}
    assert len(ids) == 2, spaced

    def reinforced() -> list[Any]:
        return [
            e
            for e in asyncio.run(memory_log(settings, ns))
            if e.type == "MemoryReinforced" and e.payload.reason == "coactivation"
        ]

    co: list[Any] = []
    deadline = time.monotonic() + 30
    while not any(e.payload.evidence["query_id"] == spaced["query_id"] for e in co):
        assert time.monotonic() < deadline, co
        time.sleep(0.5)
        co = reinforced()
    for mid in ids:  # the burst's recalls were logged before the spaced one: all were read
        mine = [e.payload.evidence["query_id"] for e in co if e.payload.memory_id == mid]
        assert mine.count(spaced["query_id"]) == 1, mine
        assert len(mine) <= 2, mine  # at most once more, for the whole burst of six


def test_frequent_access_promotes_to_core(settings: Settings, worker: WorkerProcess) -> None:
    ns = f"tier-{uuid.uuid4().hex[:8]}"
    with Memory(settings=settings) as mem:
        # said an hour ago: the recalls' event time is the wall clock, and a memory said in
        # 2024 would be found idle for years by the day's dream cycle, which the first
        # recall may start before its access counts (faded to peripheral, by design)
        said = datetime.now(UTC) - timedelta(hours=1)
        mem.add(["I keep my passport in the blue drawer."], user_id=ns, occurred_at=said)
        deadline = time.monotonic() + 45
        while not mem.recall("where is my passport", namespace=ns, k=1)["results"]:
            assert time.monotonic() < deadline
            time.sleep(0.5)
        for _ in range(5):  # five uses within 14 days (event time of the recalls)
            mem.recall("where is my passport", namespace=ns, k=1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        changes = [e for e in asyncio.run(memory_log(settings, ns)) if e.type == "TierChanged"]
        if changes:
            break
        time.sleep(0.5)
    assert [(c.payload.from_tier, c.payload.to_tier) for c in changes] == [("working", "core")]
    assert changes[0].payload.rule and changes[0].payload.evidence


async def _records(settings: Settings, role: str) -> list[Any]:
    return [
        r async for r in read_topic(settings.bootstrap(), BY_ROLE[role].name(settings.topic_prefix))
    ]
