"""A copy of a turn that arrives while the original's buffer is being extracted is a
duplicate, not a new turn (a producer retrying after a timeout can store a turn twice)."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from memstream.core.embedding import HashingEmbedder
from memstream.infra.settings import Settings
from memstream.schemas import ConversationTurn, decode, encode, make_event
from memstream.streams.app import create_app
from memstream.streams.partition_state import PartitionState
from memstream.streams.sinks import MemorySink

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)


async def empty_state(partition: int) -> PartitionState:
    return PartitionState(partition, HashingEmbedder())


def turn(i: int) -> bytes:
    return encode(
        make_event(
            ConversationTurn(
                turn_id=f"t{i}", role="user", speaker="Ann", text=f"We walked along river {i}."
            ),
            namespace="acme",
            session_id="s1",
            occurred_at=T0 + timedelta(minutes=i),
        )
    )


async def test_a_copy_of_a_turn_in_a_buffer_being_extracted_is_dropped() -> None:
    sink = MemorySink()
    settings = Settings(kafka_bootstrap="127.0.0.1:9", topic_prefix="ctx", buffer_max_turns=3)
    app, _topics = create_app(settings, sink=sink, state_loader=empty_state)
    app.flow_control.resume()  # test_context hangs without it
    handles: Any = app.memstream  # type: ignore[attr-defined]
    async with app.agents["write-path"].test_context() as agent:
        # one batch: t0..t2 fill the buffer (it is cut for extraction), then copies follow
        for raw in [turn(0), turn(1), turn(2), turn(0), turn(2)]:
            await agent.put(raw, key=b"acme")
        for _ in range(100):
            heads = [
                e
                for e in (decode(r.value) for r in sink.on("ctx.memory.log"))
                if e.type == "TurnsExtracted"
            ]
            if heads and handles["write_path"].stats.duplicates >= 2:
                break
            await asyncio.sleep(0.05)
    covered = Counter(t.turn_id for h in heads for t in h.payload.turns)
    assert covered == {"t0": 1, "t1": 1, "t2": 1}
    assert handles["write_path"].stats.duplicates == 2
    state = await handles["states"].get(0)
    assert not state.buffers  # the copies did not start a buffer of their own
