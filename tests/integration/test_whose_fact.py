"""Whose fact a question asks for, through the broker with the defaults and the rule
extractor: "where do I live?" answers with the speaker's home, not the sister's, though both
hold the location slot and the sister's says more of the question's words; "what pet do I
have?" with the speaker's cat, not the neighbour's dog; "where does my brother work?" with
the brother's job; "how old is my mom?" with the mother's age, not the speaker's (core/whose.py;
the slot lift goes to the holder the question is about)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, answers, remembered

pytestmark = pytest.mark.integration

SAID = [
    "I live in Lisbon.",
    "My sister lives in Berlin with her husband and two kids, she loves living there.",
    "I work at Acme as a designer.",
    "My brother works at Google in Zurich as an engineer.",
    "I have a cat named Luna.",
    "My neighbour has a dog named Rex.",
    "I'm 34 years old.",
    "My mom is 61 and lives in Porto.",
]


@pytest.fixture(scope="module")
def namespace(settings: Settings, worker: WorkerProcess) -> str:
    return remembered(settings, "whose", [(datetime(2024, 5, 1, 9, tzinfo=UTC), SAID)])


@pytest.mark.parametrize(
    ("question", "first", "other"),
    [
        ("Where do I live?", "Maya lives in Lisbon", "sister"),
        ("What pet do I have?", "cat named Luna", "neighbour"),
        ("Where does my brother work?", "brother works at Google", None),
        # the mother's age holds the age slot with another clause after it; only her
        # memory is lifted as its holder, not the speaker's own age
        ("How old is my mom?", "mom is 61", None),
    ],
)
def test_the_fact_of_the_person_asked_about_answers_first(
    settings: Settings, namespace: str, question: str, first: str, other: str | None
) -> None:
    results = answers(settings, namespace, question)
    assert results and first in results[0]["text"], [r["text"] for r in results]
    if other is not None:
        (theirs,) = [r for r in results if other in r["text"]][:1]
        assert theirs["explain"]["whose"] < 1.0, theirs["explain"]  # scaled, and said why
