"""Offset commits never pass a held (un-acknowledged) message: faust's bookkeeping, no broker."""

from __future__ import annotations

import gc
import weakref
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from faust.transport.drivers.aiokafka import Consumer
from faust.types import TP, ConsumerMessage, Message

from memstream.core.embedding import HashingEmbedder
from memstream.infra.settings import Settings
from memstream.schemas import ConversationTurn, encode, make_event
from memstream.schemas.envelope import DEFAULT_LIMITS
from memstream.streams.app import create_app
from memstream.streams.commits import HeldOffsetsConsumer
from memstream.streams.intake import DeadLetters, decoded
from memstream.streams.partition_state import PartitionState
from memstream.streams.sinks import MemorySink

TOPIC = "ctx.turns"
TP0 = TP(TOPIC, 0)


async def empty_state(partition: int) -> PartitionState:
    return PartitionState(partition, HashingEmbedder())


def consumer(monkeypatch: pytest.MonkeyPatch) -> Any:
    settings = Settings(kafka_bootstrap="127.0.0.1:9", topic_prefix="ctx")
    app, _topics = create_app(settings, state_loader=empty_state)
    monkeypatch.setattr(app.topics, "acks_enabled_for", lambda topic: True)  # as once started
    return app.consumer


def delivered(c: Any, offsets: range) -> list[Message]:
    messages = [Message(TOPIC, 0, o, 0.0, 0, [], b"k", b"v", None, tp=TP0) for o in offsets]
    for m in messages:
        c.track_message(m)
    return messages


async def test_the_worker_commits_through_the_held_offsets_consumer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert isinstance(consumer(monkeypatch), HeldOffsetsConsumer)


async def test_a_held_first_message_stops_the_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    c = consumer(monkeypatch)
    first, *rest = delivered(c, range(5))
    for m in rest:  # later turns of other sessions: extracted and acknowledged
        c.ack(m)
    assert c._new_offset(TP0) is None  # nothing committed yet: offset 0 is still held
    c.ack(first)  # its buffer was extracted
    assert c._new_offset(TP0) == 5


@pytest.mark.parametrize("forgotten", [False, True])
async def test_a_held_message_after_a_commit_stops_the_next_one(
    monkeypatch: pytest.MonkeyPatch, forgotten: bool
) -> None:
    c = consumer(monkeypatch)
    messages = delivered(c, range(6))
    c.ack(messages[0])
    c.ack(messages[1])
    assert c._new_offset(TP0) == 2
    c._committed_offset[TP0] = 2
    for m in messages[3:]:
        c.ack(m)
    held = weakref.ref(messages[2])
    if forgotten:  # the rest of a batch cut short by a stop: only the consumer knows it
        del messages
        gc.collect()
    assert c._new_offset(TP0) is None  # offset 2 is held
    message = held()
    assert message is not None  # the consumer still tracks it
    c.ack(message)
    assert c._new_offset(TP0) == 6


async def test_stock_faust_commits_past_a_held_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """Why the subclass exists; if this starts failing, faust fixed it upstream."""
    c = consumer(monkeypatch)
    _held, *rest = delivered(c, range(5))
    for m in rest:
        c.ack(m)
    assert Consumer._new_offset(c, TP0) == 5  # past offset 0, which nobody acknowledged


async def test_acknowledged_and_revoked_messages_leave_the_tracking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    c = consumer(monkeypatch)
    messages = delivered(c, range(3))
    c.ack(messages[0])
    c._clean_unacked_messages()  # what each commit does first
    assert {m.offset for m in c._unacked_messages} == {1, 2}
    await c.on_partitions_revoked({TP0})
    assert c._unacked_messages == set()


class _Stream:
    """What ``decoded`` reads of a faust stream: ``app.consumer`` and ``events()``, which,
    as faust's stream iterator does, acknowledges the current record when it is left."""

    def __init__(self, c: Any, messages: list[Message]) -> None:
        self.app = SimpleNamespace(consumer=c)
        self.messages = messages
        self.running: Any = None

    def events(self) -> Any:
        async def run() -> Any:
            for m in self.messages:
                m.incref()  # delivered to this stream
                try:
                    yield SimpleNamespace(message=m)
                finally:
                    m.ack(self.app.consumer)

        self.running = run()
        return self.running


def turn_record(offset: int) -> ConsumerMessage:
    value = encode(
        make_event(
            ConversationTurn(turn_id=f"t{offset}", role="user", speaker="Ann", text="Hello."),
            namespace="acme",
            session_id="s1",
            occurred_at=datetime(2024, 3, 1, 9, offset, tzinfo=UTC),
        )
    )
    # the kind the consumer hands out: its last acknowledgement reaches the consumer
    return ConsumerMessage(TOPIC, 0, offset, 0.0, 0, [], b"acme", value, None, tp=TP0)


async def test_an_agent_step_cut_short_leaves_its_record_unacknowledged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stop cancels an agent half-way through a record: faust's iterator acknowledges it
    on the way out, ``decoded``'s own hold keeps it un-acknowledged, so it is read again."""
    c = consumer(monkeypatch)
    messages = [turn_record(o) for o in range(3)]
    for m in messages:
        c.track_message(m)
    stream = _Stream(c, messages)
    steps = decoded(stream, DeadLetters(MemorySink(), "ctx.dlq", "test"), DEFAULT_LIMITS)
    await steps.__anext__()
    await steps.__anext__()  # the first step is done; the second one is cut short:
    await steps.aclose()
    await stream.running.aclose()
    assert messages[0].acked and not messages[1].acked
    assert c._new_offset(TP0) == 1
