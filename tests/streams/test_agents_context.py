"""Agents under faust's ``agent.test_context()``: no broker, an in-memory sink as the double."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import orjson

from memstream.core.embedding import HashingEmbedder
from memstream.infra.settings import Settings
from memstream.schemas import ConversationTurn, WorkflowObserved, decode, encode, make_event
from memstream.streams.app import create_app
from memstream.streams.deadletter import decode_dead_letter
from memstream.streams.partition_state import PartitionState
from memstream.streams.sinks import MemorySink

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)


async def empty_state(partition: int) -> PartitionState:
    return PartitionState(partition, HashingEmbedder())


def build(sink: MemorySink) -> Any:
    settings = Settings(kafka_bootstrap="127.0.0.1:9", topic_prefix="ctx", buffer_max_turns=3)
    app, _topics = create_app(settings, sink=sink, state_loader=empty_state)
    app.flow_control.resume()  # test_context hangs without it
    return app


async def test_validation_agent_dead_letters_bad_input_and_carries_on() -> None:
    sink = MemorySink()
    app = build(sink)
    good = make_event(WorkflowObserved(workflow="recall", outcome="success"), namespace="acme")
    async with app.agents["workflow-observer"].test_context() as agent:
        await agent.put(b"{not json", key=b"acme")
        await agent.put(encode(good), key=b"acme")
        await agent.put(orjson.dumps({"type": "Nope"}), key=b"acme")
    letters = [decode_dead_letter(r.value) for r in sink.on("ctx.dlq")]
    assert [d.reason for d in letters] == ["bad_json", "missing_field"]
    assert letters[0].original == b"{not json" and letters[0].agent == "workflow-observer"


async def test_write_path_agent_buffers_and_flushes_in_test_context() -> None:
    sink = MemorySink()
    app = build(sink)
    texts = [
        "The weather was fine today.",
        "We walked along the river.",
        "It was a calm afternoon.",
    ]
    async with app.agents["write-path"].test_context() as agent:
        for i, text in enumerate(texts):
            env = make_event(
                ConversationTurn(turn_id=f"t{i}", role="user", speaker="Ann", text=text),
                namespace="acme",
                session_id="s1",
                occurred_at=T0,
            )
            await agent.put(encode(env), key=b"acme")
        for _ in range(50):  # take_events flushes its batch within 50 ms
            if sink.on("ctx.memory.log"):
                break
            await asyncio.sleep(0.05)
    log = [decode(r.value) for r in sink.on("ctx.memory.log")]
    assert log and log[-1].type == "TurnsExtracted"  # last: after the decisions it caused
    assert log[-1].payload.trigger == "buffer_full"  # three NORMAL turns fill a buffer of three
    assert [t.turn_id for t in log[-1].payload.turns] == ["t0", "t1", "t2"]
    assert all(e.causation_id == log[-1].event_id for e in log[:-1])
