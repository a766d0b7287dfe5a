"""Profile questions in other words than the facts, through the broker with the defaults and
the rule extractor (tried as a new user would, on a set written before these fixes: 17 of 20
answered first, 19 now): "where am I from?" asks for the origin slot ("grew up in Ohio"), a
working life ended says what it was ("retired from teaching" is a job title, lifted for
"what was my profession?" above the husband's), and an intolerance is no way of eating
("lactose intolerant" used to supersede "vegetarian for ten years": both hold)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, answers, remembered

pytestmark = pytest.mark.integration

SAID = [
    "My husband Tom is a firefighter.",
    "I grew up in a small town in Ohio.",
    "I volunteer at the animal shelter on Sundays.",
    "I've been vegetarian for ten years.",
    "I retired from teaching in 2020.",
    "I'm lactose intolerant.",
]


@pytest.fixture(scope="module")
def namespace(settings: Settings, worker: WorkerProcess) -> str:
    return remembered(settings, "profile", [(datetime(2024, 5, 1, 9, tzinfo=UTC), SAID)])


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("Where am I from?", "Maya grew up in a small town in Ohio"),
        ("What was my profession?", "Maya retired from teaching in 2020"),
        ("How long have I been vegetarian?", "Maya has been vegetarian for ten years"),
        ("Am I lactose intolerant?", "Maya is lactose intolerant"),
    ],
)
def test_the_fact_answers_first(
    settings: Settings, namespace: str, question: str, first: str
) -> None:
    results = [r["text"] for r in answers(settings, namespace, question)]
    assert results and results[0] == first, results


def test_an_intolerance_leaves_the_diet_active(settings: Settings, namespace: str) -> None:
    with Memory(settings=settings) as mem:
        rows = mem.get_all(namespace=namespace)["results"]
    diet = [r for r in rows if "vegetarian" in r["memory"]]
    assert diet and all(r["status"] == "active" for r in diet), diet
