"""The write path's bounded dedup (core/seen_turns.py) over an in-memory sink, with
generations of one turn: a copy of a turn still in the window is a duplicate, a copy of one
that left it is dead-lettered with its reason (never extracted twice, never dropped unseen),
and a new turn after them is extracted."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from memstream.core.embedding import HashingEmbedder
from memstream.core.seen_turns import SeenTurns
from memstream.infra.settings import Settings
from memstream.schemas import ConversationTurn, decode, encode, make_event
from memstream.streams.app import create_app
from memstream.streams.deadletter import decode_dead_letter
from memstream.streams.partition_state import PartitionState
from memstream.streams.sinks import MemorySink

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)


async def small_window(partition: int) -> PartitionState:
    return PartitionState(partition, HashingEmbedder(), seen_turns=SeenTurns(capacity=1))


def turn(i: int) -> bytes:
    return encode(
        make_event(
            ConversationTurn(
                turn_id=f"t{i}", role="user", speaker="Ann", text=f"I hiked up peak number {i}."
            ),
            namespace="acme",
            session_id="s1",
            occurred_at=T0 + timedelta(minutes=i),
        )
    )


async def extractions(sink: MemorySink, n: int) -> list[Any]:
    for _ in range(100):
        heads = [
            e
            for e in (decode(r.value) for r in sink.on("ctx.memory.log"))
            if e.type == "TurnsExtracted"
        ]
        if len(heads) >= n:
            break
        await asyncio.sleep(0.05)
    return heads


async def test_a_copy_beyond_the_window_is_dead_lettered_not_extracted_again() -> None:
    sink = MemorySink()
    settings = Settings(kafka_bootstrap="127.0.0.1:9", topic_prefix="ctx", buffer_max_turns=1)
    app, _topics = create_app(settings, sink=sink, state_loader=small_window)
    app.flow_control.resume()  # test_context hangs without it
    handles: Any = app.memstream  # type: ignore[attr-defined]
    stats = handles["write_path"].stats
    async with app.agents["write-path"].test_context() as agent:
        for i in range(4):  # each turn fills its buffer: four extractions, t2 and t3 held
            await agent.put(turn(i), key=b"acme")
        await extractions(sink, 4)
        # t0 left the window (dated before its session's floor); t3 is in it; t4 is new
        for raw in [turn(0), turn(3), turn(4)]:
            await agent.put(raw, key=b"acme")
        heads = await extractions(sink, 5)
        for _ in range(100):
            if stats.beyond_window and stats.duplicates:
                break
            await asyncio.sleep(0.05)
    covered = Counter(t.turn_id for h in heads for t in h.payload.turns)
    assert covered == {f"t{i}": 1 for i in range(5)}
    assert (stats.duplicates, stats.beyond_window) == (1, 1)
    [letter] = [decode_dead_letter(r.value) for r in sink.on("ctx.dlq")]
    assert letter.reason == "beyond_dedup_window" and letter.path == "occurred_at"
    assert decode(letter.original).payload.turn_id == "t0"  # the original bytes, kept
    state = await handles["states"].get(0)
    assert len(state.seen_turns) == 2 and not state.buffers
