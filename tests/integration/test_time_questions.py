"""A question that names only a time, through the broker with the defaults and the rule
extractor: "what did I do last weekend?" shares no word with "went to a jazz concert at
SFJAZZ", and "what happened in February?" none with "went skiing in Tahoe". Recall reads the
memories said in the span the question names (a store search filtered by event time,
``said_at``) and, the time being all it asks about, ranks by the time first
(core/intent.py ``time_only``): what happened in the span, not what held through it, the
events of a life before an evening's pasta; "late March" is its second half."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, remembered

pytestmark = pytest.mark.integration

SAID = [
    (datetime(2024, 1, 9, 10, tzinfo=UTC), "My sister had her baby yesterday, a boy named Theo!"),
    (datetime(2024, 1, 22, 19, tzinfo=UTC), "Cooked pasta tonight."),
    (datetime(2024, 1, 26, 19, tzinfo=UTC), "My cousin had her baby yesterday, a girl named Ada!"),
    (datetime(2024, 2, 3, 10, tzinfo=UTC), "I went skiing in Tahoe with Ben."),
    (datetime(2024, 2, 20, 10, tzinfo=UTC), "Started a pottery class downtown."),
    (datetime(2024, 3, 9, 10, tzinfo=UTC), "We had a picnic at Golden Gate Park."),
    (datetime(2024, 3, 23, 10, tzinfo=UTC), "My brother visited from Denver for the weekend."),
    (datetime(2024, 4, 6, 10, tzinfo=UTC), "Ran my first 10k race in 52 minutes."),
    (datetime(2024, 4, 13, 10, tzinfo=UTC), "Adopted a kitten named Miso."),
    (datetime(2024, 4, 20, 10, tzinfo=UTC), "Went to a jazz concert at SFJAZZ."),
    (datetime(2024, 4, 25, 10, tzinfo=UTC), "Work was stressful, big release."),
]
ASKED_AT = "2024-04-27T12:00:00+00:00"  # a Saturday: last weekend is April 20-21


@pytest.fixture(scope="module")
def namespace(settings: Settings, worker: WorkerProcess) -> str:
    return remembered(settings, "when", [(at, [text]) for at, text in SAID])


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("What did I do last weekend?", ["jazz concert"]),
        ("What happened in February?", ["skiing", "pottery"]),
        ("What did I do in March 2024?", ["picnic", "brother"]),
        ("What did I do two weeks ago?", ["kitten"]),
        # the second half of January (not Theo's birth on the 8th), and among what happened
        # then a birth before an evening's pasta
        ("What happened in late January?", ["Ada"]),
    ],
)
def test_a_time_alone_finds_what_happened_then(
    settings: Settings, namespace: str, question: str, first: list[str]
) -> None:
    with Memory(settings=settings) as mem:
        found = mem.recall(question, namespace=namespace, filters={"at": ASKED_AT})
    top = [r["text"] for r in found["results"][: len(first)]]
    assert all(any(word in t for t in top) for word in first), [r["text"] for r in found["results"]]
    # ranked by event time first: the explanation says how much the time counted
    assert found["results"][0]["explain"]["event_time"] == 1.0, found["results"][0]["explain"]
