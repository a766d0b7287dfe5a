"""Knowledge updates through the broker, defaults and the rule extractor: a later statement
that changes where the user lives, what they prefer or where they work answers the question
at rank 1, and the old memory is superseded by an event that names its successor."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from consumers.client import Memory
from infra.settings import Settings
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
CASES = [
    (
        "I live in Lisbon.",
        "Actually, I moved from Lisbon to Porto last month.",
        "where do I live?",
        "Porto",
        "Lisbon",
    ),
    (
        "I work at Initech as a data engineer.",
        "I left Initech, now I work at Globex as a designer.",
        "where do I work?",
        "Globex",
        "Initech",
    ),
]


def _memories(mem: Memory, ns: str) -> list[dict[str, Any]]:
    return list(mem.get_all(user_id=ns)["results"])


@pytest.mark.parametrize(("old", "new", "question", "answer", "stale"), CASES)
def test_the_newer_fact_answers_and_the_old_one_is_superseded(
    settings: Settings,
    worker: WorkerProcess,
    old: str,
    new: str,
    question: str,
    answer: str,
    stale: str,
) -> None:
    ns = f"ku-{random.randrange(10**8)}"
    with Memory(settings=settings) as mem:
        mem.add(
            [{"role": "user", "content": old, "speaker": "Sam"}],
            user_id=ns,
            run_id="s1",
            occurred_at=T0,
        )
        mem.add(
            [{"role": "user", "content": new, "speaker": "Sam"}],
            user_id=ns,
            run_id="s2",
            occurred_at=T0 + timedelta(days=40),
        )
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            rows = _memories(mem, ns)
            olds = [r for r in rows if stale in r["memory"] and answer not in r["memory"]]
            if olds and olds[0]["status"] != "active" and any(answer in r["memory"] for r in rows):
                break
            time.sleep(0.5)
        old_row = olds[0]
        assert old_row["status"] == "superseded" and old_row["superseded_by"], rows
        kinds = [e["type"] for e in mem.history(old_row["id"], namespace=ns)]
        assert "MemorySuperseded" in kinds
        top = ""
        while time.monotonic() < deadline + 15:
            hits = mem.search(question, user_id=ns, top_k=3)["results"]
            top = hits[0]["memory"] if hits else ""
            if answer in top:
                break
            time.sleep(0.5)
        assert answer in top, hits
