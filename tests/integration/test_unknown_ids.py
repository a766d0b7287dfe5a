"""Unknown and foreign ids (issue 12, item 4), through the session worker and the real broker:
the edge answers 404 for an id no namespace has and 403 for another namespace's (the SDK
raises them), and feedback on unknown recalls that reaches the topic anyway never holds up
the Q-learner: another tenant's edit lands before they are dead-lettered, with their reason."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime

import pytest

from memstream.consumers.client import Memory, MemstreamError
from memstream.consumers.kafka_read import read_topic
from memstream.consumers.producer import Producer
from memstream.infra.settings import Settings
from memstream.schemas.topics import BY_ROLE
from memstream.streams.deadletter import DeadLetter, decode_dead_letter
from tests.harness import WorkerProcess
from tests.integration.test_write_path import memory_log

pytestmark = pytest.mark.integration

T0 = datetime(2024, 7, 1, 9, tzinfo=UTC)


def _remembered(mem: Memory, ns: str) -> str:
    mem.add("I drink green tea every morning.", user_id=ns, occurred_at=T0)
    deadline = time.monotonic() + 45
    while time.monotonic() < deadline:
        found = mem.get_all(user_id=ns)["results"]
        if found:
            return str(found[0]["memory_id"])
        time.sleep(0.3)
    raise AssertionError(f"no memory in {ns}")


async def _dead_letters(s: Settings, agent: str) -> list[DeadLetter]:
    topic = BY_ROLE["dlq"].name(s.topic_prefix)
    return [
        dl
        async for r in read_topic(s.bootstrap(), topic)
        if (dl := decode_dead_letter(r.value)).agent == agent
    ]


def test_unknown_and_foreign_ids_are_the_callers_error(
    settings: Settings, worker: WorkerProcess
) -> None:
    ours, theirs = f"ids-{uuid.uuid4().hex[:8]}", f"ids-{uuid.uuid4().hex[:8]}"
    with Memory(settings=settings) as mem:
        memory_id = _remembered(mem, ours)
        text = mem.get(memory_id, namespace=ours)["text"]
        deadline = time.monotonic() + 30
        while not (hits := mem.search("what do I drink?", user_id=ours))["results"]:
            assert time.monotonic() < deadline, "the memory never became recallable"
            time.sleep(0.3)
        # known ids of the caller's namespace: queued as before
        assert mem.feedback(hits["query_id"], "positive", namespace=ours)["status"] == "queued"
        assert mem.feedback(memory_id, "positive", namespace=ours)["status"] == "queued"

        def refused(call: object) -> MemstreamError:
            with pytest.raises(MemstreamError) as info:
                call()  # type: ignore[operator]
            return info.value

        unknown = refused(lambda: mem.feedback("q-nothing-like-it", "positive", namespace=ours))
        assert (unknown.status, unknown.code, unknown.path) == (404, "unknown_query", "query_id")
        assert "q-nothing-like-it" in unknown.message
        gone = refused(lambda: mem.feedback("no-such-memory", "negative", namespace=ours))
        assert (gone.status, gone.code, gone.path) == (404, "unknown_memory", "memory_ids[0]")
        edit = refused(lambda: mem.update("no-such-memory", "x", namespace=ours))
        assert (edit.status, edit.code, edit.path) == (404, "unknown_memory", "memory_id")
        # another tenant's ids: forbidden, whichever door
        for call in (
            lambda: mem.feedback(hits["query_id"], "positive", namespace=theirs),
            lambda: mem.feedback(memory_id, "negative", namespace=theirs),
            lambda: mem.update(memory_id, "mine now", namespace=theirs),
            lambda: mem.delete(memory_id, namespace=theirs),
        ):
            foreign = refused(call)
            assert foreign.status == 403 and "another namespace" in foreign.message
        assert mem.get(memory_id, namespace=ours)["text"] == text  # untouched by the refused


def test_unknown_recalls_on_the_topic_never_hold_up_the_learner(
    settings: Settings, worker: WorkerProcess
) -> None:
    stray, other = f"stray-{uuid.uuid4().hex[:8]}", f"edit-{uuid.uuid4().hex[:8]}"
    with Memory(settings=settings) as mem:
        memory_id = _remembered(mem, other)
        # three feedback events on recalls that never happened, past the edge (a raw producer):
        # each used to hold the Q-learner for 10 s, and everyone's edits behind them
        strays = [f"q-stray-{i}-{uuid.uuid4().hex[:6]}" for i in range(3)]
        with Producer(settings) as p:
            for qid in strays:
                p.feedback(namespace=stray, query_id=qid, outcome="positive")
        mem.update(memory_id, "I drink black tea every morning.", namespace=other)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        letters = [
            dl
            for dl in asyncio.run(_dead_letters(settings, "q-learner"))
            if dl.original_key == stray.encode()
        ]
        if len(letters) == 3:
            break
        time.sleep(0.5)
    assert sorted(dl.message.split("'")[1] for dl in letters) == sorted(strays)
    assert {(dl.reason, dl.path) for dl in letters} == {("unknown_query", "payload.query_id")}
    [updated] = [e for e in asyncio.run(memory_log(settings, other)) if e.type == "MemoryUpdated"]
    assert updated.payload.text == "I drink black tea every morning."
    # the edit was decided before any of the strays was given up on: nothing waited on them
    assert updated.recorded_at < min(dl.failed_at for dl in letters)
