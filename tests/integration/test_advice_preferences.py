"""Through the broker with the defaults and the rule extractor: a request for help puts
the preference it must respect first (core/advice.py), above where the same words without the
request rank it, and says so in the explanation."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta

import pytest

from memstream.consumers.client import Memory
from memstream.core.advice import LIFT
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 4, 2, 8, tzinfo=UTC)
TURNS = [
    "I prefer writing in the mornings between 7 and 9 AM, when I'm most focused.",
    "My personal statement is for the film studies programme at the university.",
    "The scholarship deadline for the statement is May 15, 2024.",
    "I joined a writing group that meets every Friday at the library.",
    "My writing mentor Robert reviews my drafts.",
    "I finished the second draft of the statement last night.",
]
QUESTION = "Can you help me plan my writing sessions for the upcoming week?"
STATEMENT = "My writing sessions for the upcoming week."


def test_a_request_for_help_lifts_the_preference(settings: Settings, worker: WorkerProcess) -> None:
    ns = f"adv-{random.randrange(10**8)}"
    with Memory(settings=settings) as mem:
        for i, text in enumerate(TURNS):
            mem.add(
                [{"role": "user", "content": text, "speaker": "Maya"}],
                user_id=ns,
                run_id=f"s{i}",
                occurred_at=T0 + timedelta(days=i),
            )
        deadline = time.monotonic() + 45
        hits: list[dict[str, object]] = []
        while time.monotonic() < deadline:
            hits = mem.recall(QUESTION, namespace=ns, k=5)["results"]
            if hits and any("prefer" in str(h["text"]) for h in hits):
                break
            time.sleep(0.5)
        assert hits, "nothing recalled"
        ranked = [(h["category"], h["explain"].get("advice")) for h in hits]
        asked = next(i for i, h in enumerate(hits) if h["category"] == "preference")
        assert hits[asked]["explain"]["advice"] == LIFT, ranked
        assert asked == 0, ranked
        # the same words without the request: no lift, the preference ranks lower
        plain = mem.recall(STATEMENT, namespace=ns, k=5)["results"]
        told = next(i for i, h in enumerate(plain) if h["category"] == "preference")
        assert "advice" not in plain[told]["explain"]
        assert asked < told, (ranked, [h["category"] for h in plain])
