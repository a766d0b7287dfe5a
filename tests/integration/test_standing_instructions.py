"""A standing instruction comes with the request it governs, with the defaults and the rule
extractor, through the broker: "always include version numbers when I ask about software
libraries" is among the first results for "which libraries does this project use?" (no word
in common with the rule but its condition), with the matched condition in ``explain``; a
question about what was said gets no rule, nor does a request no rule covers. A stated
preference comes with a request on what it is about ("suggest some books for my trip")."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, projected

pytestmark = pytest.mark.integration

T0 = datetime(2024, 3, 4, 9, tzinfo=UTC)
CHATTER = [
    "I'm building a budget tracker with Flask and SQLite for my household expenses.",
    "The dashboard shows monthly spending by category with a bar chart.",
    "I deployed the first version on Render last Friday.",
    "My sister Clara tested the signup form and found a bug in the email check.",
    "I fixed the email validation bug and added a unit test for it.",
    "Next I want to add CSV export for the transactions table.",
    "We went hiking in the Serra da Estrela at the weekend.",
    "I prefer dark mode in every editor I use.",
    "I prefer e-books for their portability, do you have any tips for reading on a tablet?",
    "My reading group meets on Thursdays at the library café.",
]
RULE = "Always include version numbers when I ask about software libraries or dependencies."


def test_the_rule_comes_with_the_request_it_governs(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"rules-{uuid.uuid4().hex[:8]}"
    with Memory(settings=settings) as mem:
        turns = [{"role": "user", "content": RULE}] + [
            {"role": "user", "content": text} for text in CHATTER
        ]
        for i, turn in enumerate(turns):
            mem.add([turn], user_id=ns, run_id=f"s{i}", occurred_at=T0 + timedelta(days=i))
        deadline = time.monotonic() + 90  # until every turn is a memory in the store
        while len(mem.get_all(user_id=ns)["results"]) < len(turns):
            assert time.monotonic() < deadline, mem.get_all(user_id=ns)
            time.sleep(0.5)
        projected(settings)  # get_all read DuckDB; recall reads Qdrant
        answer = mem.recall("Which libraries does this project use?", namespace=ns, k=5)
        ranked = [r["text"] for r in answer["results"]]
        first = [r for r in answer["results"][:3] if "version numbers" in r["text"]]
        assert first, ranked
        rule = first[0]["explain"]["standing_instruction"]
        assert "libraries" in rule["condition"] and rule["match"] >= 0.2, rule

        books = mem.recall("Can you suggest some books for my holiday trip?", namespace=ns, k=5)
        liked = [r for r in books["results"][:4] if "e-books" in r["text"]]
        assert liked and "standing_instruction" in liked[0]["explain"], books["results"]

        # a lookup of what was said: no rule is pushed in
        said = mem.recall("What did I say about the email bug?", namespace=ns, k=5)
        assert not any("standing_instruction" in r["explain"] for r in said["results"])
        # a request no rule covers: none either
        hike = mem.recall("Suggest a mountain trail for next weekend", namespace=ns, k=5)
        assert not any("standing_instruction" in r["explain"] for r in hike["results"])
