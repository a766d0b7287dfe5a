"""The Q-learner never waits on an id it does not know (issue 12, item 4), over an in-memory
sink: feedback on a recall not seen yet is parked and the agent reads on; the recall
releases it; one that never comes is dead-lettered after a bounded time; an edit or feedback
naming only unknown memories is refused with its reason."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from memstream.schemas import AccessedMemory, Feedback, MemoryAccessed, MemoryEdit, make_event
from memstream.schemas.envelope import decode
from memstream.schemas.errors import EventValidationError
from memstream.streams import learning as learning_module
from memstream.streams.learning import Learning
from memstream.streams.partition_state import PartitionState, PartitionStates
from memstream.streams.sinks import MemorySink
from tests.streams.test_maintenance import LOG, NS, T0, remembered

EVENT = SimpleNamespace(message=SimpleNamespace(partition=0, offset=0))


def learner(state: PartitionState) -> tuple[Learning, MemorySink]:
    async def load(_partition: int) -> PartitionState:
        return state

    sink = MemorySink()
    from memstream.infra.settings import Settings

    return Learning(Settings(), PartitionStates(load), sink, LOG), sink


def feedback_on(query_id: str, ns: str = NS) -> Any:
    return make_event(
        Feedback(query_id=query_id, outcome="positive"),
        namespace=ns,
        occurred_at=T0 + timedelta(hours=1),
    )


def recall(query_id: str, memory_ids: list[str]) -> Any:
    hits = [AccessedMemory(memory_id=m, rank=i + 1, score=0.9) for i, m in enumerate(memory_ids)]
    return make_event(
        MemoryAccessed(query_id=query_id, memories=hits, query="tea"),
        namespace=NS,
        occurred_at=T0 + timedelta(minutes=30),
    )


def q_updates(sink: MemorySink) -> list[Any]:
    return [e for e in (decode(r.value) for r in sink.on(LOG)) if e.type == "QValueUpdated"]


def test_feedback_before_its_recall_waits_parked_and_the_recall_releases_it() -> None:
    state = remembered()
    learn, sink = learner(state)
    memory_ids = sorted(state.memory(NS).states)

    async def story() -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        pending = await learn.on_feedback(feedback_on("q-early"), EVENT)
        assert loop.time() - started < 0.5  # the agent did not wait for the recall
        [done] = pending
        assert not done.done() and q_updates(sink) == []
        # another tenant's edit goes through meanwhile
        other = make_event(
            MemoryEdit(memory_id=memory_ids[0], action="update", text="I like green tea."),
            namespace=NS,
            occurred_at=T0 + timedelta(hours=1),
        )
        assert await learn.on_feedback(other, EVENT)
        await learn.on_access(recall("q-early", memory_ids), EVENT)
        await asyncio.wait_for(done, 1.0)

    asyncio.run(story())
    assert {e.payload.memory_id for e in q_updates(sink)} == set(memory_ids)
    assert state.parked == {}


def test_feedback_whose_recall_never_comes_is_dead_lettered_in_bounded_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(learning_module, "RECALL_WAIT_S", 0.2)
    state = remembered()
    learn, sink = learner(state)

    async def story() -> BaseException | None:
        [done] = await learn.on_feedback(feedback_on("q-never"), EVENT)
        await learn.expire_parked()
        assert not done.done()  # not yet: it may still come
        await asyncio.sleep(0.25)
        await learn.expire_parked()
        assert done.done()
        return done.exception()

    error = asyncio.run(story())
    assert isinstance(error, EventValidationError)
    assert error.code == "unknown_query" and error.path == "payload.query_id"
    assert "q-never" in error.message and q_updates(sink) == [] and state.parked == {}


def test_a_revoked_partition_releases_its_parked_feedback_unacknowledged() -> None:
    state = remembered()
    learn, _sink = learner(state)

    async def story() -> bool:
        [done] = await learn.on_feedback(feedback_on("q-gone"), EVENT)
        learn.states.drop({0})
        return done.cancelled()

    assert asyncio.run(story())


@pytest.mark.parametrize(
    "payload",
    [
        MemoryEdit(memory_id="no-such-memory", action="delete"),
        MemoryEdit(memory_id="no-such-memory", action="update", text="x"),
        Feedback(memory_ids=["no-such-memory"], outcome="negative"),
    ],
)
def test_an_unknown_memory_is_refused_with_its_reason(payload: Any) -> None:
    state = remembered()
    learn, sink = learner(state)
    env = make_event(payload, namespace=NS, occurred_at=T0 + timedelta(hours=1))
    with pytest.raises(EventValidationError) as info:
        asyncio.run(learn.on_feedback(env, EVENT))
    assert info.value.code == "unknown_memory" and "no-such-memory" in info.value.message
    assert sink.records == []


def test_a_memory_of_another_namespace_is_unknown_here() -> None:
    state = remembered()
    learn, _sink = learner(state)
    theirs = sorted(state.memory(NS).states)[0]
    env = make_event(
        MemoryEdit(memory_id=theirs, action="delete"),
        namespace="globex",
        occurred_at=T0 + timedelta(hours=1),
    )
    with pytest.raises(EventValidationError, match=r"no memory"):
        asyncio.run(learn.on_feedback(env, EVENT))
