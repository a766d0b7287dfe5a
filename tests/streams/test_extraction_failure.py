"""An extractor that raises is not a poison pill: the buffer's turns go to the dead-letter
topic with the error and their original bytes, the agent goes on, and the next turn is
extracted (write path over an in-memory sink)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from memstream.core.embedding import HashingEmbedder
from memstream.core.facts import TurnView
from memstream.infra.settings import Settings
from memstream.schemas import decode
from memstream.streams.app import create_app
from memstream.streams.deadletter import decode_dead_letter
from memstream.streams.extraction import ExtractionResult, rules_result
from memstream.streams.partition_state import PartitionState
from memstream.streams.sinks import MemorySink
from tests.streams.test_dedup_window import extractions, turn


async def empty_state(partition: int) -> PartitionState:
    return PartitionState(partition, HashingEmbedder())  # the log is empty: nothing to fold


class BrokenOnce:
    """Raises on the first buffer, as an extractor bug would, then extracts by the rules."""

    name = "rules"

    def __init__(self) -> None:
        self.calls = 0

    async def extract(self, turns: Sequence[TurnView]) -> ExtractionResult:
        self.calls += 1
        if self.calls == 1:
            raise ValueError("valid_until must not be before valid_from")
        return rules_result(turns)


async def test_a_failing_extraction_dead_letters_its_turns_and_the_agent_goes_on() -> None:
    sink = MemorySink()
    settings = Settings(kafka_bootstrap="127.0.0.1:9", topic_prefix="ctx", buffer_max_turns=1)
    app, _topics = create_app(settings, sink=sink, state_loader=empty_state)
    app.flow_control.resume()
    handles: Any = app.memstream  # type: ignore[attr-defined]
    handles["write_path"].extractor = BrokenOnce()
    async with app.agents["write-path"].test_context() as agent:
        await agent.put(turn(0), key=b"acme")
        for _ in range(100):
            if sink.on("ctx.dlq"):
                break
            await asyncio.sleep(0.05)
        await agent.put(turn(1), key=b"acme")
        heads = await extractions(sink, 1)
    [letter] = [decode_dead_letter(r.value) for r in sink.on("ctx.dlq")]
    assert "valid_until" in letter.message, letter
    assert decode(letter.original).payload.turn_id == "t0"  # the original bytes, kept
    assert [t.turn_id for h in heads for t in h.payload.turns] == ["t1"]
