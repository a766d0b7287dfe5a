"""Forgetting fires under the default settings and the rule extractor: small talk gets a
trivial importance from the extractor's spectrum, and a year of event time later the
daily dream cycle archives it (``fact_archival``, with its age and importance as
evidence) while identity, health and commitments stay active. An everyday fact nobody
recalled or rated fades by time alone: the tier rules send it dormant (``faded``, its
retention and idle days as evidence) and recall still finds it; so does the assistant's
reply, trivial by importance only to rank below what the user said. Small talk said just before
news in the same session was captured by it (synaptic tagging): consolidated, it is never
archived as trivia and only fades. Recall leaves the archived small talk out, and still
reaches it with ``include_archived``."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.consumers.client import Memory
from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from tests.harness import own_worker, turn_from_row
from tests.integration.test_edge_fading import _turn, _until

T0 = datetime(2024, 1, 10, 9, tzinfo=UTC)
TRIVIA = ("I had a sandwich for lunch.", "I went for a walk.", "I made some tea.")
IMPORTANT = (
    "My name is Sam Rivera.",
    "I work as a nurse at St Mary's hospital.",
    "I'm allergic to penicillin, please never forget that.",
)
EVERYDAY = "I take the 7:40 train to work."  # mid importance: neither trivia nor kept
# a habit names nothing and has no date, yet it is asked about long after: not trivia
HABIT = "I stay away from sugar."
# a weak remark, then news in the same session: the news captures the remark's tag
CAPTURED = "I had a bagel with my coffee this morning."
NEWS = "Big news: I got engaged to Priya last night, we are getting married in June!"
# the assistant's answer to the walk: a reply episode, importance 0.2 like trivia, but the
# record of what was answered ("what did you suggest after my walk?"): it fades, stays
REPLY = (
    "A walk is a great way to clear your head. Next time try the longer loop along the "
    "river, and bring some water if it is warm."
)


def _in_session(ns: str, i: int, text: str, at: datetime) -> Any:
    return turn_from_row(
        {
            "namespace": ns,
            "session_id": "s-news",
            "turn_id": f"t{i}",
            "role": "user",
            "speaker": "Sam",
            "text": text,
            "occurred_at": at.isoformat(),
        }
    )


def _created(log: list[Any]) -> list[Any]:
    return [e for e in log if e.type == "MemoryCreated"]


def _faded(log: list[Any]) -> list[Any]:
    return [e for e in log if e.type == "TierChanged" and e.payload.rule == "faded"]


def _archival(log: list[Any]) -> list[Any]:
    return [e for e in log if e.type == "MemoryArchived" and e.payload.rule == "fact_archival"]


async def test_small_talk_is_archived_after_a_year_and_the_rest_stays(
    settings: Settings, tmp_path: Path
) -> None:
    # the defaults: the daily dream cycle
    async with own_worker(settings, tmp_path, "forget") as own:
        ns = "forgetting"
        async with AsyncProducer(own) as p:
            for i, text in enumerate((*TRIVIA, *IMPORTANT, EVERYDAY)):
                await p.publish(_turn(ns, i, text, T0 + timedelta(minutes=i)))
            for i, text in enumerate((CAPTURED, NEWS), start=7):
                await p.publish(_in_session(ns, i, text, T0 + timedelta(hours=2, minutes=i)))
            await p.publish(_turn(ns, 10, HABIT, T0 + timedelta(minutes=10)))
            # after "I went for a walk." (turn 1, session s1)
            await p.publish(
                _turn(ns, 20, REPLY, T0 + timedelta(minutes=1, seconds=30), "assistant")
            )
        log = await _until(
            own,
            ns,
            lambda g: (
                len(_created(g)) >= 11
                and any(e.type == "TagCaptured" for e in g)
                and any(e.payload.subject == "assistant" for e in _created(g))
            ),
        )
        [reply] = [e.payload for e in _created(log) if e.payload.subject == "assistant"]
        assert reply.importance < 0.3 and reply.kind == "episode", reply
        created = {e.payload.text: e.payload for e in _created(log) if e.payload != reply}
        [captured] = [m for m in created.values() if "bagel" in m.text]
        [news] = [m for m in created.values() if "engaged" in m.text]
        trivial = {m.memory_id for m in created.values() if m.importance < 0.3} - {
            captured.memory_id
        }
        kept = {m.memory_id for m in created.values() if m.importance >= 0.7} - {news.memory_id}
        assert len(trivial) == 3 and len(kept) == 3, {t: m.importance for t, m in created.items()}
        [everyday] = [m for m in created.values() if "7:40 train" in m.text]
        assert 0.3 <= everyday.importance < 0.6, everyday.importance
        [habit] = [m for m in created.values() if "sugar" in m.text]
        assert 0.3 <= habit.importance < 0.6, habit.importance
        assert captured.importance < 0.3, captured.importance
        [capture] = [e.payload for e in log if e.type == "TagCaptured"]
        assert (capture.memory_id, capture.captured_by) == (captured.memory_id, news.memory_id)

        async with AsyncProducer(own) as p:  # a year of event time passes
            await p.publish(
                _turn(
                    ns, 9, "We bought a second bookshelf for the study.", T0 + timedelta(days=366)
                )
            )
        log = await _until(
            own,
            ns,
            lambda g: (
                {e.payload.memory_id for e in _archival(g)} >= trivial
                and {everyday.memory_id, captured.memory_id}
                <= {e.payload.memory_id for e in _faded(g)}
            ),
        )
        archived = {e.payload.memory_id: e.payload for e in _archival(log)}
        assert set(archived) == trivial, archived
        for a in archived.values():
            assert a.evidence["importance"] < 0.3 and a.evidence["age_days"] > 90
            assert a.evidence["access_count"] == 0 and a.evidence["category"] == "fact"
        # the important ones: never archived, superseded or sent dormant
        gone = {
            e.payload.memory_id
            for e in log
            if e.type in ("MemoryArchived", "MemorySuperseded")
            or (e.type == "TierChanged" and e.payload.to_tier == "peripheral")
        }
        assert not gone & kept
        # the everyday fact: never used, never rated, a year idle: faded, not archived
        [fade] = [e for e in _faded(log) if e.payload.memory_id == everyday.memory_id]
        assert (fade.payload.from_tier, fade.payload.to_tier) == ("working", "peripheral")
        assert fade.producer == "tier-keeper" and fade.payload.evidence["idle_days"] > 365
        assert fade.payload.evidence["retention"] < 0.1 and fade.payload.evidence["q_value"] == 0.5
        assert everyday.memory_id not in {
            e.payload.memory_id for e in log if e.type == "MemoryArchived"
        }
        assert habit.memory_id not in {
            e.payload.memory_id for e in log if e.type == "MemoryArchived"
        }
        # the reply: as trivial by importance, a year old, never recalled: not archived
        assert reply.memory_id not in {
            e.payload.memory_id for e in log if e.type == "MemoryArchived"
        }
        # the captured remark: as trivial by importance, but consolidated: faded, not archived
        assert captured.memory_id not in {
            e.payload.memory_id for e in log if e.type == "MemoryArchived"
        }

        with Memory(settings=own) as mem:
            query = "sandwich lunch walk tea"
            deadline = time.monotonic() + 30
            while ids := {r["memory_id"] for r in mem.recall(query, namespace=ns)["results"]}:
                if not ids & trivial:  # the read side caught up with the archival
                    break
                assert time.monotonic() < deadline, ids & trivial
                time.sleep(0.5)
            asked = mem.recall(query, namespace=ns, filters={"include_archived": True})
            back = {r["memory_id"]: r["status"] for r in asked["results"]}
            assert trivial <= set(back) and {back[m] for m in trivial} == {"archived"}, back
            name = mem.recall("what is my name", namespace=ns)["results"]
            assert any("Sam Rivera" in r["text"] for r in name), name
            dormant = {"tier": "peripheral", "include_low_confidence": True}
            while True:  # dormant, not gone: recall still finds it, among the dormant
                train = mem.recall("which train do I take", namespace=ns, filters=dormant)
                if everyday.memory_id in {r["memory_id"] for r in train["results"]}:
                    break
                assert time.monotonic() < deadline, train
                time.sleep(0.5)
