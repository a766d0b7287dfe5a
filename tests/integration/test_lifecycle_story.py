"""Months of event time through the real broker, with the dream cycle scheduled in the worker.

One user's memories are extracted (by the real openai client against the fake Responses
server, which answers with the facts scripted below), used, rated and then left alone for a
hundred days. The worker runs the dream cycle and the tier rules at every midnight (UTC) of
event time. Each change must land on the first boundary at which its rule holds, not one day
earlier and not later, and ``memstream audit`` must explain every step of every memory."""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstream.consumers.producer import AsyncProducer, turn_event
from memstream.core.lifecycle import LifecycleConfig
from memstream.core.qlearning import utility_decay
from memstream.core.schedule import boundary_at
from memstream.core.tiers import TierConfig
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas.events import AccessedMemory, Feedback, MemoryAccessed
from tests.fakes.responses_server import CannedFacts, Derive, serve_in_thread, worker_env
from tests.harness import WorkerProcess, memstream_json
from tests.integration.test_write_path import covered, memory_log

T0 = datetime(2024, 1, 1, 9, tzinfo=UTC)
DAY = timedelta(days=1)
LAST_DAY = 100
CYCLE = LifecycleConfig()
TIERS = TierConfig()

#: turn id -> (what Ana says on day 0, the fact the model extracts from it)
STORY: dict[str, tuple[str, dict[str, Any]]] = {
    "spec": ("I might take up pottery.", {"text": "Ana might take up pottery", "confidence": 0.3}),
    "trip": (
        "I'm in Berlin until January 20.",
        {
            "text": "Ana is in Berlin until 20 January 2024",
            "valid_until": "2024-01-20T00:00:00+00:00",
            "kind": "episode",
            "entities": ["Berlin"],
        },
    ),
    "soup": (
        "The cafeteria had soup today.",
        {"text": "The cafeteria had soup on 1 January 2024", "importance": 0.2},
    ),
    "tea1": ("I like green tea.", {"text": "Ana likes green tea", "category": "preference"}),
    "tea2": (
        "I like green tea a lot.",
        {"text": "Ana likes green tea a lot", "category": "preference"},
    ),
    "passport": (
        "I keep my passport in the blue drawer.",
        {"text": "Ana keeps her passport in the blue drawer"},
    ),
    "keys": ("My car keys hang on the hook.", {"text": "Ana's car keys hang on the hook"}),
    "ssh": ("My laptop's SSH port is 2222.", {"text": "Ana's laptop SSH port is 2222"}),
}


def fact(turn_id: str) -> dict[str, Any]:
    base = {
        "category": "fact",
        "confidence": 0.9,
        "importance": 0.6,
        "entities": [],
        "valid_from": None,
        "valid_until": None,
        "kind": "note",
        "subject": "ana",
        "slot": None,
    }
    return {**base, **STORY[turn_id][1], "source_turn_ids": [turn_id]}


def chooser(body: dict[str, Any]) -> Any:
    text = str(body.get("input"))
    facts = tuple(fact(tid) for tid in STORY if f'"{tid}"' in text)
    return CannedFacts(facts) if facts else Derive()


def first_boundary_from(t: datetime) -> datetime:
    """The first cycle time at or after ``t``."""
    b = boundary_at(t, DAY)
    return b if b == t else b + DAY


@pytest.fixture(scope="module")
def story_worker(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    own = settings.with_(topic_prefix="mslife", data_dir=str(tmp_path_factory.mktemp("life-data")))
    asyncio.run(ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions))
    with serve_in_thread(default=chooser) as llm:
        worker = WorkerProcess(
            own,
            tmp_path_factory.mktemp("life-worker"),
            projections="duckdb",
            dream_every_hours="24",
            **worker_env(llm),
            # Near-duplicates are kept apart at write time here, so the cycle's merge
            # step has something to merge.
            gate_create_below="0.97",
            gate_update_min="0.98",
            gate_reinforce_above="0.99",
        ).start()
        try:
            yield own, worker
        finally:
            worker.stop()


def wait_for(s: Settings, ns: str, ok: Any, timeout: float = 60.0) -> list[Any]:
    deadline = time.monotonic() + timeout
    while True:
        log = asyncio.run(memory_log(s, ns))
        if ok(log) or time.monotonic() > deadline:
            return log
        time.sleep(0.5)


async def publish(s: Settings, envs: list[Any]) -> None:
    async with AsyncProducer(s) as p:
        for env in envs:  # one at a time: the story's order is its event-time order
            await p.publish(env)


def test_months_of_lifecycle_happen_exactly_when_the_rules_say(story_worker: Any) -> None:
    s, _worker = story_worker
    ns = f"ana-{uuid.uuid4().hex[:8]}"

    def turn(tid: str, text: str, at: datetime, session: str) -> Any:
        return turn_event(
            namespace=ns,
            session_id=session,
            turn_id=tid,
            role="user",
            speaker="Ana",
            text=text,
            occurred_at=at,
        )

    # Day 0: Ana talks; every statement becomes one memory.
    asyncio.run(
        publish(
            s,
            [
                turn(tid, said, T0 + timedelta(minutes=i), "day-0")
                for i, (tid, (said, _)) in enumerate(STORY.items())
            ],
        )
    )
    log = wait_for(s, ns, lambda lg: sum(e.type == "MemoryCreated" for e in lg) >= len(STORY))
    created = {e.payload.source_turn_ids[0]: e for e in log if e.type == "MemoryCreated"}
    assert set(created) == set(STORY)
    mid = {tid: e.payload.memory_id for tid, e in created.items()}

    # Day 1: the SSH port answer was wrong three times.
    feedback = [
        _event(
            ns,
            Feedback(memory_ids=[mid["ssh"]], outcome="very_negative"),
            T0 + DAY + timedelta(hours=1, minutes=i),
        )
        for i in range(3)
    ]
    asyncio.run(publish(s, feedback))
    wait_for(
        s,
        ns,
        lambda lg: sum(e.type == "QValueUpdated" and e.producer == "q-learner" for e in lg) >= 3,
    )
    # Days 2-6: passport and keys are recalled together every day.
    accesses = [
        _event(
            ns,
            MemoryAccessed(
                query_id=f"q-day{d}",
                memories=[
                    AccessedMemory(memory_id=mid["passport"], rank=1, score=0.9),
                    AccessedMemory(memory_id=mid["keys"], rank=2, score=0.8),
                ],
                query="where are my things",
            ),
            T0 + d * DAY + timedelta(hours=1),
        )
        for d in range(2, 7)
    ]
    asyncio.run(publish(s, accesses))
    wait_for(
        s,
        ns,
        lambda lg: (
            sum(e.type == "MemoryReinforced" and e.payload.reason == "coactivation" for e in lg)
            >= 10
        ),
    )
    # Days 7-100: nothing but small talk; the clock moves on.
    asyncio.run(
        publish(
            s,
            [
                turn(f"hb-{d}", "ok", T0 + d * DAY + timedelta(hours=3), f"day-{d}")
                for d in range(7, LAST_DAY + 1)
            ],
        )
    )
    log = wait_for(s, ns, lambda lg: f"hb-{LAST_DAY}" in covered(lg), timeout=90)
    assert f"hb-{LAST_DAY}" in covered(log)

    by_memory: dict[str, list[Any]] = {}
    for e in log:
        m = getattr(e.payload, "memory_id", None)
        if m:
            by_memory.setdefault(m, []).append(e)
    heads = {e.event_id: e for e in log if e.type == "ConsolidationReported"}

    def changes(tid: str, kind: str) -> list[Any]:
        return [e for e in by_memory[mid[tid]] if e.type == kind]

    # Merge (step 5) at the first cycle: the two tea preferences become one memory, the
    # more useful one leading, the other archived with a link to it.
    day1 = boundary_at(T0 + DAY, DAY)
    [folded] = changes("tea1", "MemoryArchived") + changes("tea2", "MemoryArchived")
    assert folded.occurred_at == day1 and folded.causation_id in heads
    assert folded.payload.evidence["rule"] == "merge_cluster"
    assert folded.payload.merged_into in {mid["tea1"], mid["tea2"]} - {folded.payload.memory_id}

    # Expiry (step 3): the trip ends at its valid_until, exactly.
    [ended] = changes("trip", "MemorySuperseded")
    valid_until = datetime.fromisoformat(STORY["trip"][1]["valid_until"])
    assert ended.occurred_at == first_boundary_from(valid_until)
    assert ended.payload.evidence["rule"] == "valid_until_passed"

    # Expiry: the speculation, never confirmed, goes 30 days after it was said.
    [dropped] = changes("spec", "MemoryArchived")
    assert dropped.occurred_at == first_boundary_from(
        created["spec"].occurred_at + CYCLE.confirm_within
    )

    # Archival (step 7): the trivial fact goes once it is older than 90 days.
    [old] = changes("soup", "MemoryArchived")
    due = first_boundary_from(created["soup"].occurred_at + CYCLE.archive_after)
    assert old.occurred_at in (due, due + DAY)  # "older than": the boundary itself may not count
    assert old.occurred_at - DAY - created["soup"].occurred_at <= CYCLE.archive_after

    # Promotion: the fifth recall within 14 days lifts both to core at the next midnight.
    for tid in ("passport", "keys"):
        [up] = changes(tid, "TierChanged")
        assert (up.payload.from_tier, up.payload.to_tier, up.payload.rule) == (
            "working",
            "core",
            "access_frequency",
        )
        assert up.occurred_at == boundary_at(T0 + 7 * DAY, DAY)

    # Decay (step 1): the wrong answer's Q drifts back toward 0.5, by the formula, daily.
    q = [e.payload for e in changes("ssh", "QValueUpdated")]
    learned, decayed = q[:3], q[3:]
    assert all(p.evidence.get("rule") != "utility_decay" for p in learned)
    assert decayed and all(p.evidence["rule"] == "utility_decay" for p in decayed)
    for p in decayed:
        assert p.new_q == pytest.approx(
            utility_decay(p.old_q, p.evidence["decay_days"], CYCLE.decay_rate), abs=1e-6
        )
    assert all(a.new_q < b.new_q < 0.5 for a, b in itertools.pairwise(decayed))

    # Demotion: idle 60 days with a low Q, to peripheral, on the first midnight it holds.
    [down] = changes("ssh", "TierChanged")
    assert (down.payload.to_tier, down.payload.rule) == ("peripheral", "idle_low_q")
    assert down.occurred_at == first_boundary_from(created["ssh"].occurred_at + TIERS.idle_after)
    assert down.payload.evidence["q_value"] < TIERS.idle_q_below

    # Fading: the trivial fact nobody used or rated fades by time alone (its retention on
    # the working tier's clock), to peripheral on the first midnight it is 60 days idle,
    # before archival takes it.
    [faded] = changes("soup", "TierChanged")
    assert (faded.payload.to_tier, faded.payload.rule) == ("peripheral", "faded")
    assert faded.occurred_at == first_boundary_from(created["soup"].occurred_at + TIERS.idle_after)
    assert faded.payload.evidence["retention"] < TIERS.fade_below
    assert faded.occurred_at < old.occurred_at

    # Nothing else moved: no other tier change, nothing touched twice.
    tiered = {e.payload.memory_id for e in log if e.type == "TierChanged"}
    assert tiered == {mid["passport"], mid["keys"], mid["ssh"], mid["soup"]}

    # The audit trail of each memory explains every step.
    for tid in STORY:
        trail = audit(s, mid[tid])
        kinds = [step["kind"] for step in trail["steps"]]
        assert kinds[: kinds.index("created") + 1] == ["source_turn", "extraction", "created"]
        later = trail["steps"][kinds.index("created") + 1 :]
        events = [e for e in by_memory[mid[tid]] if e.type != "MemoryCreated"]
        named = {"QValueUpdated": "q_value"}
        assert [step["kind"] for step in later] == [named.get(e.type, e.type) for e in events], tid
        for step, e in zip(later, events, strict=True):
            assert datetime.fromisoformat(step["at"]) == e.occurred_at
            assert step["detail"]["causation_id"] == e.causation_id  # the why behind each step
            rule = getattr(e.payload, "rule", None) or e.payload.evidence.get("rule")
            if e.producer in ("dream-cycle", "tier-keeper"):
                assert rule and rule in step["summary"], (tid, step["summary"], rule)


def _event(ns: str, payload: Any, at: datetime) -> Any:
    from memstream.schemas.envelope import make_event

    return make_event(payload, namespace=ns, occurred_at=at, producer="story")


def audit(s: Settings, memory_id: str) -> dict[str, Any]:
    trail: dict[str, Any] = memstream_json(s, "audit", memory_id, "--json", timeout=60)
    return trail
