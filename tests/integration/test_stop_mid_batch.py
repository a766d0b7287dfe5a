"""A worker stopped (SIGTERM, a graceful stop as in a rolling deploy) while it is half-way
through a batch of turns: the turns it had not read yet are not committed, so the worker
that takes over reads them. faust acknowledges a whole batch when its loop is left; before
the write path held its batches, these turns were committed unread and lost."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstream.consumers.kafka_read import read_topic
from memstream.consumers.producer import AsyncProducer, turn_event
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.topics import BY_ROLE
from tests.fakes.responses_server import Delay, FakeResponsesServer, serve_in_thread, worker_env
from tests.harness import WorkerProcess

T0 = datetime(2024, 5, 6, 10, tzinfo=UTC)


@pytest.fixture
def hanging_llm() -> Iterator[FakeResponsesServer]:
    with serve_in_thread(default=Delay(300)) as server:  # every extraction call hangs
        yield server


async def covered(s: Settings) -> set[str]:
    topic = BY_ROLE["memory_log"].name(s.topic_prefix)
    events = [decode(r.value) async for r in read_topic(s.bootstrap(), topic)]
    return {t.turn_id for e in events if e.type == "TurnsExtracted" for t in e.payload.turns}


async def test_a_stop_half_way_through_a_batch_loses_no_turn(
    settings: Settings, hanging_llm: FakeResponsesServer, tmp_path: Path
) -> None:
    own = settings.with_(
        topic_prefix=f"msstopmid{random.randrange(10**6)}", data_dir=str(tmp_path / "a-data")
    )
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    # One batch: Ann's first turn, her turn two days later (its dream-cycle boundary makes the
    # worker extract the first one before reading on: the call hangs), then other tenants'
    # turns, which the worker has not read when it is stopped.
    turns = [("stop-ann", "s1", "ann-1", T0), ("stop-ann", "s2", "ann-2", T0 + timedelta(days=2))]
    turns += [(f"stop-t{i}", "s1", f"t{i}", T0) for i in range(8)]
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
    a = WorkerProcess(
        own,
        tmp_path / "a",
        **worker_env(hanging_llm, openai_timeout_s="200", openai_max_retries="0"),
    ).start()
    try:
        deadline = time.monotonic() + 60
        while hanging_llm.in_flight == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        # (more calls may follow: the idle timer extracts other tenants' buffers meanwhile)
        assert hanging_llm.in_flight >= 1, "the worker should be waiting on the model"
        stopped = time.monotonic()
        a.stop()  # SIGTERM: faust stops its agents and commits
        assert a.proc is not None and a.proc.returncode is not None
        assert time.monotonic() - stopped < 15, "a graceful stop, not the harness's SIGKILL"
    finally:
        a.stop()
    b = WorkerProcess(own.with_(data_dir=str(tmp_path / "b-data")), tmp_path / "b").start()
    try:
        want = {turn_id for _, _, turn_id, _ in turns}
        deadline = time.monotonic() + 60
        while (got := await covered(own)) != want and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
    finally:
        b.stop()
    assert got == want, f"lost: {sorted(want - got)}"
