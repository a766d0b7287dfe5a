"""Through the broker with the defaults and the rule extractor: a question that names a
person by relation ("Rosa's husband") finds what was said about them by name, because
another memory says who that is (core/relation_alias.py)."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 3, 4, 18, tzinfo=UTC)
TURNS = [
    "There are three of us: me, my husband Marcus, and our son Eli, who just turned two.",
    "We are finally redoing our kitchen this spring.",
    "Marcus works night shifts in the ER as a doctor, so dinner needs to be ready by five.",
    "I started tennis lessons on Saturday mornings to keep my sanity.",
    "My mom is visiting from El Paso in July.",
]
QUESTION = "What does Rosa's husband do for a living?"


def test_a_relation_in_the_question_is_searched_by_name(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"rel-{random.randrange(10**8)}"
    with Memory(settings=settings) as mem:
        for i, text in enumerate(TURNS):
            mem.add(
                [{"role": "user", "content": text, "speaker": "Rosa"}],
                user_id=ns,
                run_id=f"s{i}",
                occurred_at=T0 + timedelta(days=7 * i),
            )
        deadline = time.monotonic() + 45
        answer: dict[str, object] = {}
        while time.monotonic() < deadline:
            answer = mem.recall(QUESTION, namespace=ns, k=3)
            if any("night shifts" in str(r["text"]) for r in answer["results"]):  # type: ignore[attr-defined]
                break
            time.sleep(0.5)
        texts = [str(r["text"]) for r in answer["results"]]  # type: ignore[attr-defined]
        assert any("night shifts in the ER" in t for t in texts), texts
        assert answer["renamed"] == [{"mention": "Rosa's husband", "name": "Marcus"}], answer
