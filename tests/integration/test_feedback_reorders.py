"""Feedback visibly changes what recall returns, through the broker with the defaults: a
memory the agent marks wrong three times gives its place to the next one, and positive
feedback brings a lower one up; each step is a QValueUpdated event in its history."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, eventually

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 9, tzinfo=UTC)
QUESTION = "who drinks green tea?"


TEA = [
    "I drink green tea every morning.",
    "My brother Tom drinks green tea at night.",
    "My sister Ana drinks green tea after lunch.",
]


def _tell(mem: Memory, ns: str, texts: list[str]) -> None:
    turns = [{"role": "user", "content": t, "speaker": "Lea"} for t in texts]
    mem.add(turns, user_id=ns, run_id="s1", occurred_at=T0)


def _ranked(mem: Memory, ns: str) -> list[str]:
    return [r["memory_id"] for r in mem.recall(QUESTION, namespace=ns, k=5)["results"]]


def _until(mem: Memory, ns: str, ok: object, timeout: float = 30.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        ranked = _ranked(mem, ns)
        if ok(ranked) or time.monotonic() > deadline:  # type: ignore[operator]
            return ranked
        time.sleep(0.3)


def test_negative_feedback_demotes_and_positive_promotes(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"fb-{random.randrange(10**8)}"
    with Memory(settings=settings) as mem:
        _tell(mem, ns, TEA[:2])
        before = _until(mem, ns, lambda r: len(r) >= 2)
        assert len(before) >= 2, before
        top, second = before[0], before[1]
        for _ in range(3):
            mem.feedback(top, "negative", namespace=ns)
        after = _until(mem, ns, lambda r: r[0] != top)
        assert after[0] == second and top in after, (before, after)
        # the analytics projection (history) may trail the retrieval one under load
        deadline = time.monotonic() + 30
        while True:
            kinds = [e["type"] for e in mem.history(top, namespace=ns)]
            if kinds.count("QValueUpdated") >= 3 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert kinds.count("QValueUpdated") == 3
        for _ in range(3):
            mem.feedback(top, "positive", namespace=ns)
        again = _until(mem, ns, lambda r: r[0] == top)
        assert again[0] == top, again


def test_negatives_on_a_question_sink_the_memory_for_that_question_only(
    settings: Settings, worker: WorkerProcess
) -> None:
    """Feedback naming the memory and the recall it came from (query_id) stays with that
    question (core/scoped_feedback.py): three negatives put the memory last for the same
    question, while another question still ranks it first."""
    ns = f"fbq-{random.randrange(10**8)}"
    other = "what does Lea drink in the morning?"
    with Memory(settings=settings) as mem:
        _tell(mem, ns, TEA)
        before = _until(mem, ns, lambda r: len(r) >= 3)
        assert len(before) >= 3, before
        top = before[0]
        first_for_other = mem.recall(other, namespace=ns, k=5)["results"][0]["memory_id"]
        for _ in range(3):
            shown = mem.recall(QUESTION, namespace=ns, k=5)
            assert top in [r["memory_id"] for r in shown["results"]]
            mem.feedback(top, "negative", namespace=ns, query_id=shown["query_id"])
        after = _until(mem, ns, lambda r: r[-1] == top)
        assert after[-1] == top, (before, after)
        # two negatives may already put it last: wait until the store applied all three
        explained = eventually(
            lambda: mem.recall(QUESTION, namespace=ns, k=5)["results"][-1],
            lambda last: last["explain"].get("unhelpful_here") == 0.125,
            timeout=30,
            poll=0.3,
        )
        factor = explained["explain"].get("unhelpful_here")
        assert explained["memory_id"] == top and factor == 0.125, explained["explain"]
        # the global Q moved only a little: the other question is not affected as much
        if first_for_other == top:
            assert mem.recall(other, namespace=ns, k=5)["results"][0]["memory_id"] == top
        events = [e for e in mem.history(top, namespace=ns) if e["type"] == "QValueUpdated"]
        assert all(e["payload"]["evidence"].get("query_key") for e in events), events


def test_negatives_on_a_question_keep_a_stated_preference_out_of_its_answer(
    settings: Settings, worker: WorkerProcess
) -> None:
    """A stated preference is placed among the first results of the requests it is about
    (core/standing_instructions.py); marked unhelpful three times for one request, it is
    no longer placed there."""
    ns = f"fbp-{random.randrange(10**8)}"
    request = "Can you suggest some books for my vacation?"
    books = [
        "I prefer e-books for their portability.",
        "I read a mystery novel every week.",
        "My book club meets on Thursdays to discuss books.",
        "I finished a fantasy book series last month.",
        "My favourite author writes science fiction books.",
    ]

    def placed(shown: dict[str, object]) -> list[str]:
        results = shown["results"]
        assert isinstance(results, list)
        return [r["memory_id"] for r in results if "standing_instruction" in r["explain"]]

    with Memory(settings=settings) as mem:
        _tell(mem, ns, books)
        shown = eventually(
            lambda: mem.recall(request, namespace=ns, k=3),
            lambda s: bool(placed(s)),
            timeout=30,
            poll=0.3,
        )
        assert placed(shown), shown
        preference = placed(shown)[0]
        for _ in range(3):
            mem.feedback(preference, "negative", namespace=ns, query_id=shown["query_id"])
            shown = mem.recall(request, namespace=ns, k=3)
        after = eventually(
            lambda: mem.recall(request, namespace=ns, k=3),
            lambda s: preference not in [r["memory_id"] for r in s["results"]],
            timeout=30,
            poll=0.3,
        )
        assert preference not in [r["memory_id"] for r in after["results"]], after
