"""Event time has bounds (issue 12, item 5), on a worker with the default settings (the
daily dream cycle on) and the real broker: a date in 9999 or before 1970 is refused at every
edge with an error naming the field (HTTP 422, the SDK, `memstream ingest` naming the line),
and one that reaches the topics anyway is dead-lettered with its reason before any rule runs
on it: no dream cycle dated 9999, and the tenant's next turn is remembered as usual."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import orjson
import pytest
from aiokafka import AIOKafkaProducer

from memstream.consumers.client import Memory, MemstreamError
from memstream.consumers.kafka_read import read_topic
from memstream.consumers.producer import Producer, turn_event
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas.envelope import encode, make_event
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import ConversationTurn, WorkflowObserved
from memstream.schemas.topics import BY_ROLE
from memstream.streams.deadletter import DeadLetter, decode_dead_letter
from tests.harness import WorkerProcess, memstream
from tests.integration.test_write_path import memory_log

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 9, tzinfo=UTC)
FAR = datetime(9999, 12, 31, tzinfo=UTC)
EARLY = datetime(1969, 12, 31, tzinfo=UTC)


def _turn(ns: str, turn_id: str, text: str, at: datetime) -> dict[str, str]:
    return {
        "namespace": ns,
        "session_id": "s1",
        "turn_id": turn_id,
        "role": "user",
        "speaker": "Ana",
        "text": text,
        "occurred_at": at.isoformat(),
    }


async def _dead_letters(s: Settings, ns: str) -> list[DeadLetter]:
    topic = BY_ROLE["dlq"].name(s.topic_prefix)
    return [
        decode_dead_letter(r.value)
        async for r in read_topic(s.bootstrap(), topic)
        if r.key == ns.encode()
    ]


async def _raw(s: Settings, ns: str) -> None:
    """Past the edges: a turn dated 9999 between two good ones, a workflow dated 1969."""
    producer = AIOKafkaProducer(bootstrap_servers=s.bootstrap(), acks="all")
    await producer.start()
    try:
        for turn_id, text, at in (
            ("t-porto", "I live in Porto.", T0),
            ("t-mars", "I moved to Mars.", FAR),
            ("t-nurse", "I work as a nurse.", T0.replace(hour=10)),
        ):
            env = make_event(
                ConversationTurn(turn_id=turn_id, role="user", speaker="Ana", text=text),
                namespace=ns,
                session_id="s1",
                occurred_at=at,
            )
            await producer.send_and_wait(
                BY_ROLE["turns"].name(s.topic_prefix), encode(env), key=ns.encode()
            )
        flow = make_event(
            WorkflowObserved(workflow="deploy", outcome="success"), namespace=ns, occurred_at=EARLY
        )
        await producer.send_and_wait(
            BY_ROLE["workflows"].name(s.topic_prefix), encode(flow), key=ns.encode()
        )
    finally:
        await producer.stop()


def test_event_time_out_of_bounds_is_refused_everywhere(settings: Settings, tmp_path: Path) -> None:
    own = settings.with_(topic_prefix="mstime", data_dir=str(tmp_path / "data"))
    asyncio.run(ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions))
    worker = WorkerProcess(own, tmp_path / "w").start()  # default schedule: daily dream cycle
    ns = "time-raw"
    try:
        # the edges: HTTP 422 naming the field, the SDK and ingest name it too
        api = orjson.loads((Path(own.data_dir) / "worker.json").read_bytes())["api_url"]
        for at, code in ((FAR, "future_event_time"), (EARLY, "ancient_event_time")):
            r = httpx.post(
                f"{api}/v1/memories",
                json={
                    "namespace": "time-edge",
                    "messages": "I moved.",
                    "occurred_at": at.isoformat(),
                },
                timeout=10,
            )
            assert r.status_code == 422, r.text
            assert r.json()["error"]["code"] == code and r.json()["error"]["path"] == "occurred_at"
        with Memory(settings=own) as mem, pytest.raises(MemstreamError) as info:
            mem.add("I moved.", user_id="time-edge", occurred_at=FAR)
        assert info.value.status == 422 and info.value.path == "occurred_at"
        with Producer(own) as p:
            for call in (
                lambda: p.turn(
                    namespace="time-edge",
                    session_id="s",
                    turn_id="t",
                    role="user",
                    speaker="A",
                    text="hi",
                    occurred_at=FAR,
                ),
                lambda: p.workflow(
                    namespace="time-edge", workflow="w", outcome="success", occurred_at=EARLY
                ),
            ):
                with pytest.raises(EventValidationError) as bad:
                    call()
                assert bad.value.path == "occurred_at"
        with pytest.raises(EventValidationError):
            turn_event(
                namespace="x",
                session_id="s",
                turn_id="t",
                role="user",
                speaker="A",
                text="hi",
                occurred_at=FAR,
            )
        lines = tmp_path / "turns.jsonl"
        rows = [
            _turn("time-edge", "ok", "I like tea.", T0),
            _turn("time-edge", "far", "x", FAR),
            _turn("time-edge", "old", "y", EARLY),
        ]
        lines.write_text("\n".join(orjson.dumps(r).decode() for r in rows) + "\n")
        out = memstream(own, "ingest", str(lines), "--progress", "off")
        assert out.returncode == 1, out.stderr
        assert "line 2: future_event_time at occurred_at" in out.stderr, out.stderr
        assert "line 3: ancient_event_time at occurred_at" in out.stderr, out.stderr
        assert "ingested 1 turns" in out.stdout

        # past the edges: dead-lettered with the reason, and nothing dated 9999 happens
        asyncio.run(_raw(own, ns))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            log = asyncio.run(memory_log(own, ns))
            covered = {
                t.turn_id for e in log if e.type == "TurnsExtracted" for t in e.payload.turns
            }
            letters = asyncio.run(_dead_letters(own, ns))
            if {"t-porto", "t-nurse"} <= covered and len(letters) >= 2:
                break
            time.sleep(0.5)
        assert covered == {"t-porto", "t-nurse"}, covered  # not the one dated 9999
        assert sorted((d.agent, d.reason, d.path) for d in letters) == [
            ("workflow-observer", "ancient_event_time", "occurred_at"),
            ("write-path", "future_event_time", "occurred_at"),
        ]
        far_letter = next(d for d in letters if d.agent == "write-path")
        assert b"I moved to Mars." in far_letter.original
        assert all(e.occurred_at.year < 9999 for e in log), [
            e.type for e in log if e.occurred_at.year >= 9999
        ]
        assert not [e for e in log if e.type == "ConsolidationReported"]
        texts = " ".join(getattr(e.payload, "text", "") or "" for e in log)
        assert "Mars" not in texts and "nurse" in texts
    finally:
        worker.stop()
