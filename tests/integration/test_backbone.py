"""Round trips through the real broker: SDK -> topic -> decode, the DLQ, upcasting, ingest."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from memstream.consumers.kafka_read import read_topic
from memstream.consumers.producer import AsyncProducer, Producer, PublishError
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import ConversationTurn, EventValidationError, decode
from memstream.schemas.topics import BY_ROLE
from memstream.streams.deadletter import decode_dead_letter
from tests.harness import ROOT, WorkerProcess, settings_env

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def topic(s: Settings, role: str) -> str:
    return BY_ROLE[role].name(s.topic_prefix)


async def records_for(s: Settings, role: str, namespace: str) -> list[Any]:
    return [
        r async for r in read_topic(s.bootstrap(), topic(s, role)) if r.key == namespace.encode()
    ]


async def wait_for(fn: Any, predicate: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = await fn()
        if predicate(result) or time.monotonic() > deadline:
            return result
        await asyncio.sleep(0.3)


async def test_sdk_round_trip_every_input_type(settings: Settings, namespace: str) -> None:
    async with AsyncProducer(settings) as p:
        ids = [
            await p.turn(
                namespace=namespace,
                session_id="s1",
                turn_id="t1",
                role="user",
                speaker="Ann",
                text="I moved to Boston.",
                occurred_at=T0,
                metadata={"app": "chat"},
            ),
            await p.access(
                namespace=namespace,
                query_id="q1",
                memories=[("m1", 0.9), ("m2", 0.5)],
                query="where?",
            ),
            await p.feedback(namespace=namespace, query_id="q1", outcome="positive"),
            await p.workflow(namespace=namespace, workflow="recall", outcome="success"),
        ]
    seen: dict[str, Any] = {}
    for role in ("turns", "access", "feedback", "workflows"):
        for r in await records_for(settings, role, namespace):
            env = decode(r.value)
            seen[env.event_id] = env
            assert dict(r.headers)["memstream-type"] == env.type.encode()
    assert set(ids) <= set(seen)
    turn = seen[ids[0]]
    assert turn.payload == ConversationTurn(
        turn_id="t1",
        role="user",
        speaker="Ann",
        text="I moved to Boston.",
        metadata={"app": "chat"},
    )
    assert turn.occurred_at == T0 and turn.namespace == namespace and turn.session_id == "s1"
    assert seen[ids[1]].payload.top_score == 0.9


async def test_one_tenant_stays_on_one_partition_in_order(
    settings: Settings, namespace: str
) -> None:
    async with AsyncProducer(settings) as p:
        sent = [
            await p.turn(
                namespace=namespace,
                session_id="s",
                turn_id=f"t{i}",
                role="user",
                speaker="u",
                text=f"turn number {i}",
                occurred_at=T0,
            )
            for i in range(20)
        ]
    records = await records_for(settings, "turns", namespace)
    assert len({r.partition for r in records}) == 1
    assert [decode(r.value).event_id for r in records] == sent


def test_sync_producer(settings: Settings, namespace: str) -> None:
    with Producer(settings) as p:
        event_id = p.turn(
            namespace=namespace,
            session_id="s",
            turn_id="t1",
            role="user",
            speaker="u",
            text="hello there",
        )
        with pytest.raises(EventValidationError, match="role"):
            p.turn(
                namespace=namespace,
                session_id="s",
                turn_id="t2",
                role="robot",
                speaker="u",
                text="x",
            )
    records = asyncio.run(records_for(settings, "turns", namespace))
    assert [decode(r.value).event_id for r in records] == [event_id]


async def test_sdk_rejects_invalid_input_before_publishing(
    settings: Settings, namespace: str
) -> None:
    async with AsyncProducer(settings) as p:
        with pytest.raises(EventValidationError, match="namespace"):
            await p.turn(
                namespace="bad namespace!",
                session_id="s",
                turn_id="t",
                role="user",
                speaker="u",
                text="x",
            )
        with pytest.raises(EventValidationError, match="text_too_long"):
            await p.turn(
                namespace=namespace,
                session_id="s",
                turn_id="t",
                role="user",
                speaker="u",
                text="x" * (settings.max_text_chars + 1),
            )
        with pytest.raises(EventValidationError, match="missing_outcome"):
            await p.feedback(namespace=namespace, memory_ids=["m1"])
        with pytest.raises(EventValidationError, match="reward"):
            await p.feedback(namespace=namespace, memory_ids=["m1"], reward=1.5)
    assert await records_for(settings, "turns", namespace) == []


async def test_unreachable_broker_is_a_clear_error() -> None:
    from memstream.infra.broker import free_port

    with pytest.raises(PublishError, match="cannot reach Kafka"):
        await AsyncProducer(
            Settings(kafka_bootstrap=f"127.0.0.1:{free_port()}"), request_timeout_ms=2000
        ).start()


def _raw_event(namespace: str, **overrides: Any) -> dict[str, Any]:
    event = {
        "event_id": "01900000-0000-7000-8000-000000000001",
        "type": "ConversationTurn",
        "schema_version": 2,
        "occurred_at": "2024-05-01T09:00:00Z",
        "namespace": namespace,
        "payload": {"turn_id": "t1", "role": "user", "speaker": "Ann", "text": "hello"},
    }
    event.update(overrides)
    return event


async def test_invalid_events_land_in_the_dlq_with_reasons(
    settings: Settings, worker: WorkerProcess, namespace: str
) -> None:
    good = _raw_event(namespace)
    bad: dict[str, bytes] = {
        "bad_json": b'{"event_id": ',
        "invalid_utf8": b'{"text": "\xff\xfe"}',
        "wrong_type": b"[1, 2, 3]",
        "unknown_type": orjson.dumps(_raw_event(namespace, type="Teleport")),
        "missing_field": orjson.dumps({k: v for k, v in good.items() if k != "occurred_at"}),
        "text_too_long": orjson.dumps(
            _raw_event(
                namespace, payload={**good["payload"], "text": "y" * (settings.max_text_chars + 1)}
            )
        ),
        "unsupported_version": orjson.dumps(_raw_event(namespace, schema_version=99)),
        "wrong_topic": orjson.dumps(
            _raw_event(
                namespace,
                type="WorkflowObserved",
                schema_version=1,
                payload={"workflow": "w", "outcome": "success"},
            )
        ),
        "control_characters": orjson.dumps(
            _raw_event(namespace, payload={**good["payload"], "text": "a\x00b"})
        ),
    }
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap(), acks="all")
    await producer.start()
    try:
        for raw in bad.values():
            await producer.send_and_wait(topic(settings, "turns"), raw, key=namespace.encode())
        await producer.send_and_wait(
            topic(settings, "turns"), orjson.dumps(good), key=namespace.encode()
        )
    finally:
        await producer.stop()
    letters = await wait_for(
        lambda: records_for(settings, "dlq", namespace), lambda rs: len(rs) >= len(bad)
    )
    decoded = [decode_dead_letter(r.value) for r in letters]
    assert sorted(d.reason for d in decoded) == sorted(bad)
    for d in decoded:
        assert d.original == bad[d.reason], d.reason  # the original bytes, exactly
        assert d.source_topic == topic(settings, "turns") and d.agent == "write-path"
        assert d.message
    # the agent carried on: the valid event after the bad ones was not dead-lettered
    await asyncio.sleep(1.0)
    assert len(await records_for(settings, "dlq", namespace)) == len(bad)
    assert worker.proc is not None and worker.proc.poll() is None


async def test_v1_turns_are_upcast_not_dead_lettered(
    settings: Settings, worker: WorkerProcess, namespace: str
) -> None:
    v1 = orjson.dumps(
        _raw_event(
            namespace,
            schema_version=1,
            payload={
                "turn_id": "t1",
                "role": "user",
                "content": "old format",
                "metadata": {"speaker": "Bo"},
            },
        )
    )
    v0 = orjson.dumps(_raw_event(namespace, schema_version=0))
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap(), acks="all")
    await producer.start()
    try:
        await producer.send_and_wait(topic(settings, "turns"), v1, key=namespace.encode())
        await producer.send_and_wait(topic(settings, "turns"), v0, key=namespace.encode())
    finally:
        await producer.stop()
    record = (await records_for(settings, "turns", namespace))[0]
    env = decode(record.value)
    assert env.schema_version == 2
    assert env.payload == ConversationTurn(
        turn_id="t1", role="user", speaker="Bo", text="old format", metadata={"speaker": "Bo"}
    )
    letters = await wait_for(
        lambda: records_for(settings, "dlq", namespace), lambda rs: len(rs) >= 1
    )
    assert [decode_dead_letter(r.value).reason for r in letters] == [
        "wrong_type"
    ]  # version 0 is not a version


async def test_topics_create_is_idempotent(settings: Settings) -> None:
    first = await ensure_topics(settings.bootstrap(), settings.topic_prefix, settings.partitions)
    again = await ensure_topics(settings.bootstrap(), settings.topic_prefix, settings.partitions)
    assert not any(s.created for s in again)
    assert [(s.name, s.partitions) for s in first] == [(s.name, s.partitions) for s in again]
    assert all(
        s.partitions == (1 if s.name.endswith((".dlq", ".meta")) else settings.partitions)
        for s in again
    )


def test_cli_ingest_reports_bad_lines_and_publishes_the_rest(
    settings: Settings, namespace: str, tmp_path: Path
) -> None:
    lines = []
    for i in range(50):
        lines.append(
            orjson.dumps(
                {
                    "namespace": namespace,
                    "session_id": "s1",
                    "turn_id": f"t{i}",
                    "role": "user",
                    "speaker": "Ann",
                    "text": f"fact number {i}",
                    "occurred_at": "2024-05-01T09:00:00",
                }
            ).decode()
        )
    lines[10] = '{"namespace": "broken'
    lines[20] = orjson.dumps({"namespace": namespace, "text": "no ids"}).decode()
    lines[30] = lines[30].replace('"user"', '"robot"')
    path = tmp_path / "turns.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "memstream.consumers.cli", "ingest", str(path), "--progress", "off"],
        env=settings_env(settings),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert "line 11: bad_json" in result.stderr
    assert "line 21: missing_field" in result.stderr
    assert "line 31: bad_value at payload.role" in result.stderr
    assert "ingested 47 turns" in result.stdout
    records = asyncio.run(records_for(settings, "turns", namespace))
    assert len(records) == 47
    # naive times are read as UTC; event time comes from the file, not the clock
    assert decode(records[0].value).occurred_at == datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
