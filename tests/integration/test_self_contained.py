"""Self-contained, dated memories through the broker, with the defaults and the rule
extractor: two speakers over two dated sessions talk in pronouns ("He chewed through my
charger", "Does she like it?" - "Loves it."), one shares a photo with a few words around
it, one answers a question in three words ("Goalie, like his mother.") and confirms another
asked before a remark ("Yes, by two years."), one picks one of two options just offered
("Tacos, for sure."), one says where a cousin will work as "there", a class's evening as
"Thursday evenings" and a race's time in a fragment after "I finished!"; the memories name who and what, carry their
dates and the question a short answer answers, and the questions about them find them
first."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, projected

pytestmark = pytest.mark.integration

MAY = datetime(2023, 5, 8, 18, tzinfo=UTC)  # a Monday
JUNE = datetime(2023, 6, 20, 18, tzinfo=UTC)
JULY = datetime(2023, 7, 18, 18, tzinfo=UTC)
SESSIONS: list[tuple[str, datetime, list[tuple[str, str, dict[str, Any]]]]] = [
    (
        "s1",
        MAY,
        [
            ("Caroline", "Hey Mel! How was your weekend?", {}),
            ("Melanie", "Great! I finally adopted a beagle puppy, we named him Biscuit.", {}),
            ("Caroline", "No way! How is he settling in?", {}),
            ("Melanie", "He chewed through my phone charger on day two.", {}),
            (
                "Melanie",
                "We went there last weekend. This is my favorite spot.",
                {"image_caption": "a photo of a sunset over a lake with pine trees"},
            ),
        ],
    ),
    (
        "s2",
        JUNE,
        [
            ("Caroline", "My sister Ana just got a job at a bakery in Austin.", {}),
            ("Melanie", "Does she like it?", {}),
            ("Caroline", "Loves it. She bakes sourdough every morning.", {}),
            ("Melanie", "My nephew Leo made the travel hockey team.", {}),
            ("Caroline", "Amazing! What position does he play?", {}),
            ("Melanie", "Goalie, like his mother.", {}),
            ("Caroline", "Is he the youngest on the team? Congratulations to him!", {}),
            ("Melanie", "Yes, by two years.", {}),
            ("Caroline", "For his party we're thinking tacos or pizza.", {}),
            ("Melanie", "Tacos, for sure.", {}),
        ],
    ),
    (
        "s3",
        JULY,
        [
            ("Caroline", "My cousin Noor is moving to Halifax in October.", {}),
            ("Caroline", "She got a job teaching music at a school there.", {}),
            (
                "Melanie",
                "Nice! I signed up for a pottery class, Thursday evenings for ten weeks.",
                {},
            ),
            ("Melanie", "And I finished my first 10k! 58 minutes in Portland on Sunday.", {}),
        ],
    ),
]
# What the memories must say, and a question each must answer first.
EXPECTED = {
    "What did Biscuit chew through?": "Biscuit chewed through Melanie's phone charger",
    "Which photo did Melanie share in May 2023?": "Melanie shared a photo of a sunset over a lake",
    "What does Ana bake every morning?": "Ana bakes sourdough every morning",
    "Does Ana like her job at the bakery?": "Ana loves the job at a bakery",
    # "there" is the place said before it; a weekday that comes back is no date
    "Where will Noor teach music?": "Noor got a job teaching music at a school in Halifax",
    "On which evenings is Melanie's pottery class?": (
        "Melanie signed up for a pottery class, Thursday evenings for ten weeks"
    ),
    # a fragment is dated as its turn: the Sunday before, not the one ahead
    "What was Melanie's time in Portland in July 2023?": "58 minutes in Portland on 16 July 2023",
}
# A short answer keeps the question it answers: cut alone it would say nothing; whom the
# question's pronoun means stands beside the quote.
ANSWER = 'Asked "What position does he play?" (about Leo), Melanie said: "Goalie, like his mother."'
# and a confirmation keeps the question it confirms, though more was said after it
CONFIRMED = (
    'Asked "Is he the youngest on the team?" (about Leo), Melanie said: "Yes, by two years."'
)
# and a reply picking an option says which, over which, and where they were offered
CHOSEN = (
    'Melanie prefers tacos over pizza (of "For his party we\'re thinking tacos or pizza."): '
    '"Tacos, for sure."'
)
# A memory that opens with one of these leans on a turn it does not carry.
PRONOUN = re.compile(
    r"^(?:it|its|it's|they|them|their|this|that|these|those|he|him|his|she|her)\b", re.I
)


def eventually(fn: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 45.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


@pytest.fixture(scope="module")
def conversation(settings: Settings, worker: WorkerProcess) -> tuple[str, list[str]]:
    ns = f"selfc-{int(time.time() * 1000) % 10**9}"
    with Memory(settings=settings) as mem:
        for session, start, turns in SESSIONS:
            for i, (speaker, text, metadata) in enumerate(turns):
                mem.add(
                    [{"role": "user", "content": text, "speaker": speaker}],
                    namespace=ns,
                    run_id=session,
                    metadata=metadata,
                    occurred_at=start + timedelta(minutes=i),
                )

        def texts() -> list[str]:
            return [r["memory"] for r in mem.get_all(namespace=ns)["results"]]

        wanted = [*EXPECTED.values(), ANSWER, CONFIRMED, CHOSEN]
        got = eventually(texts, lambda ts: all(any(e in t for t in ts) for e in wanted))
    projected(settings)  # get_all read DuckDB; the questions ask Qdrant
    return ns, got


def test_memories_name_who_and_what_and_carry_their_dates(
    conversation: tuple[str, list[str]],
) -> None:
    _, texts = conversation
    for expected in EXPECTED.values():
        assert any(expected in t for t in texts), (expected, texts)
    assert not [t for t in texts if PRONOUN.match(t)], texts
    photo = next(t for t in texts if "shared a photo" in t)
    # the photo keeps what was said with it, and both dates: when shared, when they went
    assert "8 May 2023" in photo and "favorite spot" in photo, photo
    assert any("weekend of 6 May 2023" in t for t in texts), texts


@pytest.mark.parametrize("question", list(EXPECTED))
def test_the_questions_find_them_first(
    settings: Settings, conversation: tuple[str, list[str]], question: str
) -> None:
    ns, _ = conversation
    with Memory(settings=settings) as mem:
        found = mem.recall(question, namespace=ns)
    top = [r["text"] for r in found["results"]]
    assert top and EXPECTED[question] in top[0], (question, top)


def test_a_short_answer_keeps_its_question_and_is_found_by_it(
    settings: Settings, conversation: tuple[str, list[str]]
) -> None:
    ns, texts = conversation
    assert ANSWER in texts, texts
    assert "Goalie, like his mother" not in texts  # the fragment alone is not kept
    assert CONFIRMED in texts, texts
    with Memory(settings=settings) as mem:
        found = mem.recall("Which position does Leo play in hockey?", namespace=ns)
        youngest = mem.recall("Is Leo the youngest on his hockey team?", namespace=ns)
    top = [r["text"] for r in found["results"]][:3]
    assert ANSWER in top, top
    top = [r["text"] for r in youngest["results"]][:3]
    assert CONFIRMED in top, top


def test_a_reply_picking_an_option_is_a_preference_found_by_it(
    settings: Settings, conversation: tuple[str, list[str]]
) -> None:
    ns, texts = conversation
    assert CHOSEN in texts, texts
    with Memory(settings=settings) as mem:
        found = mem.recall("What food does Melanie prefer for the party?", namespace=ns)
    top = [r["text"] for r in found["results"]][:3]
    assert CHOSEN in top, top
