"""One batch of turns that the write path flushes half-way through: a tenant's turn, her
turn two days later (its dream-cycle boundary makes the worker extract the first one before
it reads on), then other tenants' turns. Tests of what a worker does when that flush hangs
or fails start from it (test_stop_mid_batch.py, test_agent_crash.py)."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memstream.consumers.kafka_read import read_topic
from memstream.consumers.producer import AsyncProducer, turn_event
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.topics import BY_ROLE

T0 = datetime(2024, 5, 6, 10, tzinfo=UTC)


async def publish_boundary_batch(
    settings: Settings, tmp_path: Path, tag: str, others: int
) -> tuple[Settings, set[str]]:
    """Topics of their own (prefix ``ms<tag>...``), the batch published; the settings and
    the batch's turn ids."""
    own = settings.with_(
        topic_prefix=f"ms{tag}{random.randrange(10**6)}", data_dir=str(tmp_path / "a-data")
    )
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    turns = [
        (f"{tag}-ann", "s1", "ann-1", T0),
        (f"{tag}-ann", "s2", "ann-2", T0 + timedelta(days=2)),
    ]
    turns += [(f"{tag}-t{i}", "s1", f"t{i}", T0) for i in range(others)]
    async with AsyncProducer(own) as p:
        await p.publish_many(
            [
                turn_event(
                    namespace=ns,
                    session_id=session,
                    turn_id=turn_id,
                    role="user",
                    speaker="Ann",
                    text=f"I keep a notebook about birds, page {turn_id}.",
                    occurred_at=at,
                )
                for ns, session, turn_id, at in turns
            ]
        )
    return own, {turn_id for _, _, turn_id, _ in turns}


async def extracted(s: Settings) -> Counter[str]:
    """How often each turn id appears in a TurnsExtracted event of the memory log."""
    topic = BY_ROLE["memory_log"].name(s.topic_prefix)
    events = [decode(r.value) async for r in read_topic(s.bootstrap(), topic)]
    return Counter(t.turn_id for e in events if e.type == "TurnsExtracted" for t in e.payload.turns)
