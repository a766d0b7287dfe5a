"""An exception that escapes an agent (not a bad record: those are dead-lettered; a broker
write that failed for good, say) stops the worker with exit status 1, and the worker started
after it extracts every turn the crashed one held, once. Before, faust restarted the agent
alone: it read on past the held turns, nothing was committed beyond them and they were not
read again until the worker restarted (the committed offset stalled, the turns waited)."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstream.consumers.kafka_read import read_topic
from memstream.consumers.producer import AsyncProducer, turn_event
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.topics import BY_ROLE
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 5, 6, 10, tzinfo=UTC)


async def extracted(s: Settings) -> Counter[str]:
    """How often each turn id appears in a TurnsExtracted event."""
    topic = BY_ROLE["memory_log"].name(s.topic_prefix)
    events = [decode(r.value) async for r in read_topic(s.bootstrap(), topic)]
    return Counter(t.turn_id for e in events if e.type == "TurnsExtracted" for t in e.payload.turns)


async def test_an_agent_that_raises_stops_the_worker_and_its_turns_are_read_again(
    settings: Settings, tmp_path: Path
) -> None:
    own = settings.with_(
        topic_prefix=f"mscrash{random.randrange(10**6)}", data_dir=str(tmp_path / "data")
    )
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    # Ann's turn two days after her first: its dream-cycle boundary makes the write path's
    # agent flush the first one while it reads the batch (the flush the fake fails)
    turns = [("crash-ann", "s1", "ann-1", T0), ("crash-ann", "s2", "ann-2", T0 + timedelta(days=2))]
    turns += [(f"crash-t{i}", "s1", f"t{i}", T0) for i in range(6)]
    async with AsyncProducer(own) as p:
        await p.publish_many(
            [
                turn_event(
                    namespace=ns,
                    session_id=session,
                    turn_id=turn_id,
                    role="user",
                    speaker="Ann",
                    text=f"I keep a notebook about herons, page {turn_id}.",
                    occurred_at=at,
                )
                for ns, session, turn_id, at in turns
            ]
        )
    # no idle flush before the agent's own: the timer's path stopped the worker already
    a = WorkerProcess(
        own, tmp_path / "a", entry="tests.fakes.failing_flush", buffer_idle_seconds="600"
    )
    a.start()
    try:
        assert a.proc is not None
        deadline = time.monotonic() + 60
        while a.proc.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        log = a.log.read_text()
        assert a.proc.returncode == 1, f"the worker should have stopped; log:\n{log[-3000:]}"
        assert "agent write-path crashed" in log and "injected" in log, log[-3000:]
    finally:
        a.stop()
    b = WorkerProcess(own, tmp_path / "b").start()
    try:
        want = {turn_id for _, _, turn_id, _ in turns}
        deadline = time.monotonic() + 60
        while set(got := await extracted(own)) != want and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
    finally:
        b.stop()
    assert set(got) == want, f"never extracted: {sorted(want - set(got))}"
    assert max(got.values()) == 1, f"extracted twice: {[t for t, n in got.items() if n > 1]}"
