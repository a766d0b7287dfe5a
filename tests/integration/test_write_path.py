"""The write path through the real broker: scripted memory events, replays, crashes."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.consumers.kafka_read import read_topic
from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.topics import BY_ROLE
from tests.harness import WorkerProcess

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
SCRIPT = [
    ("user", "Hi there!"),
    ("user", "I live in Boston."),
    ("assistant", "Good to know."),
    ("user", "My favorite editor is Vim."),
    ("user", "Actually, I live in Denver now."),  # a correction: the buffer is extracted at once
    ("user", "I live in Denver now."),  # a later batch repeats a known fact
    ("user", "ok thanks"),
]


async def publish(
    s: Settings, namespace: str, script: list[tuple[str, str]], session: str = "s1"
) -> None:
    async with AsyncProducer(s) as p:
        for i, (role, text) in enumerate(script):
            await p.turn(
                namespace=namespace,
                session_id=session,
                turn_id=f"{session}-t{i}",
                role=role,
                speaker="Ann" if role == "user" else "assistant",
                text=text,
                occurred_at=T0 + timedelta(minutes=i),
            )


async def memory_log(s: Settings, namespace: str) -> list[Any]:
    topic = BY_ROLE["memory_log"].name(s.topic_prefix)
    return [
        decode(r.value)
        async for r in read_topic(s.bootstrap(), topic)
        if r.key == namespace.encode()
    ]


def covered(log: list[Any]) -> list[str]:
    return [t.turn_id for e in log if e.type == "TurnsExtracted" for t in e.payload.turns]


async def wait_covered(s: Settings, namespace: str, n: int, timeout: float = 45.0) -> list[Any]:
    deadline = time.monotonic() + timeout
    while True:
        log = await memory_log(s, namespace)
        if len(covered(log)) >= n or time.monotonic() > deadline:
            return log
        await asyncio.sleep(0.5)


def decisions(log: list[Any]) -> list[tuple[str, str]]:
    return [
        (e.type, e.payload.evidence.get("decision", ""))
        for e in log
        if e.type != "TurnsExtracted" and not e.type.startswith("Relation")  # edges: own test
    ]


async def test_scripted_conversation_produces_the_expected_memory_events(
    settings: Settings, worker: WorkerProcess, namespace: str
) -> None:
    await publish(settings, namespace, SCRIPT)
    log = await wait_covered(settings, namespace, len(SCRIPT))
    assert sorted(covered(log)) == sorted(
        f"s1-t{i}" for i in range(len(SCRIPT))
    )  # each turn exactly once
    assert decisions(log) == [
        ("MemoryCreated", "create"),
        ("MemoryCreated", "create"),
        ("MemoryCreated", "supersede"),
        ("MemorySuperseded", "supersede"),
        ("DuplicateSkipped", "skip-duplicate"),
    ]
    triggers = [e.payload.trigger for e in log if e.type == "TurnsExtracted"]
    assert triggers == ["high_signal", "idle"]
    created = {e.payload.memory_id: e for e in log if e.type == "MemoryCreated"}
    superseded = next(e for e in log if e.type == "MemorySuperseded")
    assert "Boston" in created[superseded.payload.memory_id].payload.text
    assert "Denver" in created[superseded.payload.superseded_by].payload.text
    heads = {e.event_id: e for e in log if e.type == "TurnsExtracted"}
    decided = {e.event_id for e in log if e.type != "TurnsExtracted"}
    for e in log:
        if e.type.startswith("Relation"):  # an edge names the decision that implied it
            assert e.causation_id in decided and e.session_id == "s1"
        elif e.type != "TurnsExtracted":
            assert e.causation_id in heads and e.session_id == "s1"
    skipped = [t for h in heads.values() for t in h.payload.turns if t.level == "SKIP"]
    assert {t.turn_id for t in skipped} == {"s1-t0", "s1-t6"}  # the greeting and the "ok"


async def test_replaying_the_same_turns_creates_nothing_new(
    settings: Settings, worker: WorkerProcess, namespace: str
) -> None:
    await publish(settings, namespace, SCRIPT)
    first = await wait_covered(settings, namespace, len(SCRIPT))
    await publish(
        settings, namespace, SCRIPT
    )  # the same turns again (a producer retry, a re-ingest)
    await asyncio.sleep(3.0)  # longer than the idle flush: anything new would be on the log by now
    assert [e.event_id for e in await memory_log(settings, namespace)] == [
        e.event_id for e in first
    ]


async def test_a_killed_worker_loses_no_buffered_turn(
    settings: Settings, namespace: str, tmp_path: Path
) -> None:
    """Turns held in a session buffer (not yet extracted) survive SIGKILL: the next worker re-reads them."""
    own = settings.with_(
        topic_prefix="mskill", data_dir=str(tmp_path / "data")
    )  # own topics, group, stores
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    slow = WorkerProcess(
        own, tmp_path / "a", buffer_idle_seconds="600", buffer_max_turns="50"
    ).start()
    calm = [
        ("user", f"The weather note number {i} was fine.") for i in range(5)
    ]  # NORMAL turns: buffered
    try:
        await publish(own, namespace, calm)
        await asyncio.sleep(4.0)  # consumed and buffered, committed offsets flushed at least once
        assert covered(await memory_log(own, namespace)) == []
        slow.kill()
    finally:
        slow.stop()
    fresh = WorkerProcess(own, tmp_path / "b", buffer_idle_seconds="1").start()
    try:
        log = await wait_covered(own, namespace, len(calm))
        assert sorted(covered(log)) == sorted(f"s1-t{i}" for i in range(len(calm)))
    finally:
        fresh.stop()
