"""The scheduled maintenance shell over an in-memory sink: one cycle per event-time boundary
and namespace, none when the schedule is off, and a failing cycle reported, not raised."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bench.offline_pipeline import run_offline
from memstream.core.embedding import HashingEmbedder
from memstream.infra.settings import Settings
from memstream.schemas.envelope import decode
from memstream.streams.learning import Learning
from memstream.streams.maintenance import Maintenance
from memstream.streams.partition_state import PartitionState, PartitionStates
from memstream.streams.sinks import MemorySink

T0 = datetime(2024, 1, 1, 9, tzinfo=UTC)
NS = "acme"
LOG, WORKFLOWS = "t.memory.log", "t.workflows"


def remembered() -> PartitionState:
    """A partition that remembers a trip until 20 January (the cycle expires it after)."""
    rows = [
        {
            "namespace": NS,
            "session_id": "s1",
            "turn_id": f"t{i}",
            "role": "user",
            "speaker": "Ana",
            "text": text,
            "occurred_at": (T0 + timedelta(minutes=i)).isoformat(),
        }
        for i, text in enumerate(["I am staying in Berlin until January 20, 2024.", "I like tea."])
    ]
    state = PartitionState(0, HashingEmbedder())
    for env in run_offline(rows).events:
        state.apply(env)
    return state


def shell(state: PartitionState, **settings: Any) -> tuple[Maintenance, MemorySink]:
    async def load(_partition: int) -> PartitionState:
        return state

    states = PartitionStates(load)
    sink = MemorySink()
    s = Settings(**settings)
    return Maintenance(s, states, Learning(s, states, sink, LOG), sink, LOG, WORKFLOWS), sink


def types(sink: MemorySink) -> list[str]:
    return [decode(r.value).type for r in sink.on(LOG)]


def test_one_cycle_per_boundary_at_the_boundary() -> None:
    state = remembered()
    maintenance, sink = shell(state)

    async def story() -> None:
        await maintenance.states.get(0)
        for hours in range(0, 24 * 25, 5):  # inputs every 5 h for 25 days
            await maintenance.before(state, NS, T0 + timedelta(hours=hours))

    asyncio.run(story())
    ended = [decode(r.value) for r in sink.on(LOG)]
    superseded = [e for e in ended if e.type == "MemorySuperseded"]
    [trip] = [m for m in state.memory(NS).states.values() if m.valid_until is not None]
    # "until January 20" holds through that day: it ends at the next midnight, exactly
    assert trip.valid_until == datetime(2024, 1, 21, tzinfo=UTC)
    assert [e.occurred_at for e in superseded] == [trip.valid_until]
    reports = [e for e in ended if e.type == "ConsolidationReported"]
    # the dream cycle's reports (evolution's, on its own 6-hour trigger, are tested apart)
    heads = [e for e in reports if e.payload.evidence.get("kind") != "evolution"]
    assert heads and all(
        e.occurred_at.hour == 0 and e.payload.evidence["trigger"] == "schedule" for e in heads
    )
    assert len({e.occurred_at for e in heads}) == len(heads)  # never twice for one boundary
    days = {(T0 + timedelta(hours=h)).date() for h in range(0, 24 * 25, 5)}
    assert maintenance.cycles == len(days)  # one per midnight the inputs reach
    observed = [decode(r.value) for r in sink.on(WORKFLOWS)]
    assert {e.payload.outcome for e in observed} == {"success"}


def test_schedule_off_runs_nothing() -> None:
    state = remembered()
    maintenance, sink = shell(
        state, dream_every_hours=0.0, evolution_every_hours=0.0, evolution_q_updates=0
    )
    asyncio.run(maintenance.before(state, NS, T0 + timedelta(days=40)))
    assert maintenance.cycles == 0 and sink.records == []


def test_a_failing_cycle_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    state = remembered()
    maintenance, sink = shell(state)

    async def broken(*_a: Any, **_kw: Any) -> Any:
        raise RuntimeError("disk full")

    monkeypatch.setattr("memstream.streams.maintenance.run_cycle", broken)
    asyncio.run(maintenance.before(state, NS, T0 + timedelta(days=3)))
    [failure] = [decode(r.value) for r in sink.on(WORKFLOWS)]
    assert failure.payload.outcome == "failure" and "disk full" in (failure.payload.detail or "")
    assert maintenance.failures == 1
    # not retried in a loop: the next input of the same day runs nothing
    asyncio.run(maintenance.before(state, NS, T0 + timedelta(days=3, hours=2)))
    assert maintenance.failures == 1


def test_the_timer_runs_cycles_for_clocks_moved_by_the_log() -> None:
    state = remembered()
    maintenance, sink = shell(state)

    async def tick() -> None:
        await maintenance.states.get(0)
        state.advance(NS, datetime(2024, 1, 21, 3, tzinfo=UTC))  # e.g. folded from the log
        await maintenance.tick()

    asyncio.run(tick())
    assert "MemorySuperseded" in types(sink)
