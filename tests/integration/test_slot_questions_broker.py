"""Through the broker with the defaults and the rule extractor: "where does she live now?"
finds the move, said in other words, because the write path put it in the location slot
(core/slot_questions.py)."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta

import pytest

from memstream.consumers.client import Memory
from memstream.core.slot_questions import LIFT
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 3, 4, 18, tzinfo=UTC)
TURNS = [
    "I'm still doing night shifts as a nurse at the children's hospital.",
    "We made it! Moved into a two-bedroom in Ballard, Seattle, last Saturday.",
    "Biscuit the beagle now sleeps on the new couch.",
    "Ran the Riverfront Half in 1:58, my first time under two hours.",
]


def test_a_question_for_a_slot_finds_its_holder(settings: Settings, worker: WorkerProcess) -> None:
    ns = f"slot-{random.randrange(10**8)}"
    with Memory(settings=settings) as mem:
        for i, text in enumerate(TURNS):
            mem.add(
                [{"role": "user", "content": text, "speaker": "Lena"}],
                user_id=ns,
                run_id=f"s{i}",
                occurred_at=T0 + timedelta(days=7 * i),
            )
        deadline = time.monotonic() + 45
        hits: list[dict[str, object]] = []
        while time.monotonic() < deadline:
            hits = mem.recall("Where does Lena live now?", namespace=ns, k=3)["results"]
            if any("Ballard" in str(h["text"]) for h in hits):
                break
            time.sleep(0.5)
        assert hits and "Ballard" in str(hits[0]["text"]), [h["text"] for h in hits]
        assert hits[0]["explain"]["slot"] == LIFT  # type: ignore[index]
