"""Recall quality through the broker, with the defaults and the rule extractor: an
off-topic question, or one only about someone never mentioned, is answered "nothing
relevant" by the absolute confidence gate, its results withheld unless asked for (``include_low_confidence``), while on-topic ones are not; a question naming a month finds the memory of that month first
among memories that match it equally well in words; a dream-cycle summary cites its
members' turns and is folded behind them, so it never pushes them out of a recall."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, memstream_json, projected

T0 = datetime(2024, 3, 4, 9, tzinfo=UTC)
SESSIONS = [
    # (days after T0, turns): one hike a month, March, April, May 2024
    (0, ["I adopted a beagle puppy called Biscuit.", "We went hiking on Mount Tamalpais."]),
    (30, ["I started learning the cello.", "We went hiking in Yosemite."]),
    (62, ["We went hiking in the Dolomites with my sister Clara."]),
]


def eventually(fn: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 45.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


@pytest.fixture(scope="module")
def story(settings: Settings, worker: WorkerProcess) -> str:
    ns = f"conf-{int(time.time() * 1000) % 10**9}"
    with Memory(settings=settings) as mem:
        total = 0
        for i, (days, turns) in enumerate(SESSIONS):
            total += len(turns)
            mem.add(
                [{"role": "user", "content": t, "speaker": "Maya"} for t in turns],
                namespace=ns,
                run_id=f"s{i}",
                occurred_at=T0 + timedelta(days=days),
            )
        got = eventually(lambda: mem.get_all(namespace=ns)["results"], lambda rs: len(rs) >= total)
        assert len(got) >= total, got
    projected(settings)  # get_all read DuckDB; the questions ask Qdrant
    return ns


def test_off_topic_question_is_answered_nothing_relevant(settings: Settings, story: str) -> None:
    with Memory(settings=settings) as mem:
        off = mem.recall("What is the capital gains tax rate on cryptocurrency?", namespace=story)
        assert off["confidence"] == "skipped"
        assert off["skipped_reason"] == "nothing relevant"
        # withheld by default: the caller is told how many there were, and gets them if asked
        assert off["results"] == [] and off["withheld"] > 0, off
        asked = mem.recall(
            "What is the capital gains tax rate on cryptocurrency?",
            namespace=story,
            filters={"include_low_confidence": True},
        )
        assert asked["confidence"] == "skipped" and asked["skipped_reason"] == "nothing relevant"
        assert len(asked["results"]) == off["withheld"] and "withheld" not in asked
        on = mem.recall("What kind of dog did Maya adopt?", namespace=story)
        assert on["confidence"] != "skipped"
        assert "beagle" in on["results"][0]["text"]
    # the CLI likewise, with --include-low-confidence
    question = "What is the capital gains tax rate on cryptocurrency?"
    quiet = memstream_json(settings, "recall", question, "--namespace", story, "--json")
    assert quiet["results"] == [] and quiet["withheld"] > 0, quiet
    loud = memstream_json(
        settings, "recall", question, "--namespace", story, "--json", "--include-low-confidence"
    )
    assert len(loud["results"]) == quiet["withheld"], loud


def test_a_question_about_someone_never_mentioned_is_answered_nothing_relevant(
    settings: Settings, story: str
) -> None:
    with Memory(settings=settings) as mem:
        # its words match the hikes well; the person was never mentioned
        rui = mem.recall("Where did Rui go hiking?", namespace=story)
        assert rui["confidence"] == "skipped" and rui["skipped_reason"] == "nothing relevant"
        assert rui["unknown_names"] == ["Rui"] and rui["results"] == [], rui
        clara = mem.recall("Where did Clara go hiking?", namespace=story)
        assert clara["confidence"] != "skipped" and "unknown_names" not in clara, clara
        assert "Dolomites" in clara["results"][0]["text"]
        # one known name is enough for an answer; the unknown one is named
        both = mem.recall("Did Clara and Rui go hiking together?", namespace=story)
        assert both["confidence"] != "skipped" and both["unknown_names"] == ["Rui"], both


@pytest.mark.parametrize(
    ("month", "place"), [("March", "Tamalpais"), ("April", "Yosemite"), ("May", "Dolomites")]
)
def test_a_question_naming_a_month_finds_that_months_memory_first(
    settings: Settings, story: str, month: str, place: str
) -> None:
    with Memory(settings=settings) as mem:
        found = mem.recall(f"Where did Maya go hiking in {month} 2024?", namespace=story)
        first = found["results"][0]
        assert place in first["text"], [r["text"] for r in found["results"]]
        assert first["explain"]["event_time"] == 1.0 and first["explain"]["event_time.w"] > 0


DECISIONS = [
    "We decided to use Postgres for the billing database.",
    "We decided to move the standup to 10am.",
    "We decided to adopt Kafka for the event pipeline.",
    "We decided to hire a second designer in June.",
    "We decided to drop the legacy mobile app.",
    "We decided to host the offsite in Lisbon.",
    "We decided to switch the CI to GitHub Actions.",
    "We decided to freeze features before the audit.",
    "We decided to rename the product to Harbor.",
    "We decided to publish release notes every Friday.",
    "We decided to keep the free tier for students.",
    "We decided to run a security review every quarter.",
]


def test_a_summary_is_folded_behind_its_members(settings: Settings, worker: WorkerProcess) -> None:
    ns = f"fold-{int(time.time() * 1000) % 10**9}"
    with Memory(settings=settings) as mem:
        mem.add(
            [{"role": "user", "content": t, "speaker": "Maya"} for t in DECISIONS],
            namespace=ns,
            run_id="s1",
            occurred_at=T0,
        )
        members = eventually(
            lambda: mem.get_all(namespace=ns)["results"], lambda rs: len(rs) >= len(DECISIONS)
        )
        assert len(members) >= len(DECISIONS), members
        later = (T0 + timedelta(days=1)).isoformat()
        memstream_json(
            settings, "consolidate", "--json", "--namespace", ns, "--at", later, "--apply"
        )

        def summaries() -> list[dict[str, Any]]:
            rows = mem.get_all(namespace=ns)["results"]
            return [
                r
                for r in rows
                if r.get("metadata", {}).get("category", r.get("category")) == "summary"
            ]

        made = eventually(summaries, bool, timeout=30)
        assert made, mem.get_all(namespace=ns)["results"]
        found = eventually(
            lambda: mem.recall("Which database did we decide to use for billing?", namespace=ns),
            lambda r: len(r["results"]) >= 10,
        )
        texts = [r["text"] for r in found["results"]]
        assert "Postgres" in texts[0], texts
        assert all(r["category"] != "summary" for r in found["results"]), texts
