"""Through the broker with the defaults and the rule extractor: what a question's words say
beyond its topic changes what recall brings first. Three stories are told at once (their
extraction waits overlap), then each is asked about:

- a request for help puts the preference it must respect first (core/advice.py), above
  where the same words without the request rank it, also one said as one thing ranked over
  another ("I prioritized battery life ... over brand prestige");
- a person named by relation ("Rosa's husband") is searched for by name too, because another
  memory says who that is (core/relation_alias.py);
- "where does Lena live now?" finds the move, said in other words, because the write path
  put it in the location slot (core/slot_questions.py);
- "the order in which I brought up ... throughout our conversations" is searched without its
  frame and its answer spread over the weeks, not gathered on the busiest day
  (core/query_frame.py, core/mmr.py).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstream.consumers.client import Memory
from memstream.core.advice import LIFT as ADVICE_LIFT
from memstream.core.slot_questions import LIFT as SLOT_LIFT
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, projected

pytestmark = pytest.mark.integration

T0 = datetime(2024, 3, 4, 8, tzinfo=UTC)
STORIES = {
    "advice": (
        "Maya",
        [
            "I prefer writing in the mornings between 7 and 9 AM, when I'm most focused.",
            "My personal statement is for the film studies programme at the university.",
            "The scholarship deadline for the statement is May 15, 2024.",
            "I joined a writing group that meets every Friday at the library.",
            "My writing mentor Robert reviews my drafts.",
            "I finished the second draft of the statement last night.",
        ],
    ),
    "ranked": (
        "Omar",
        [
            "My phone screen cracked last week, so I need a new one soon.",
            "I prioritized battery life and camera quality over brand prestige when I bought "
            "my last phone.",
            "I use my phone to film my daughter's football games on Saturdays.",
            "The phone store on Main Street opens at nine on Saturdays.",
            "I'm saving up about $800 for the next phone.",
        ],
    ),
    "relation": (
        "Rosa",
        [
            "There are three of us: me, my husband Marcus, and our son Eli, who just turned two.",
            "We are finally redoing our kitchen this spring.",
            "Marcus works night shifts in the ER as a doctor, so dinner needs to be ready by five.",
            "I started tennis lessons on Saturday mornings to keep my sanity.",
            "My mom is visiting from El Paso in July.",
        ],
    ),
    "slot": (
        "Lena",
        [
            "I'm still doing night shifts as a nurse at the children's hospital.",
            "We made it! Moved into a two-bedroom in Ballard, Seattle, last Saturday.",
            "Biscuit the beagle now sleeps on the new couch.",
            "Ran the Riverfront Half in 1:58, my first time under two hours.",
        ],
    ),
}
# (day, text): three turns on the first day share the most words with the question
SPAN = (
    "Noor",
    [
        (0, "I started my garden project this weekend and built two raised beds for the garden."),
        (0, "For the garden project I mixed compost into the raised beds of the garden."),
        (0, "I planted lettuce first in the garden project beds because they get morning sun."),
        (21, "For the garden project I set up drip irrigation on a timer."),
        (49, "I harvested the first tomatoes of my garden project today."),
    ],
)


@pytest.fixture(scope="module")
def told(settings: Settings, worker: WorkerProcess) -> Iterator[tuple[Memory, dict[str, str]]]:
    spaces = {name: f"cue-{name}-{random.randrange(10**8)}" for name in (*STORIES, "span")}
    with Memory(settings=settings) as mem:
        for i, (day, text) in enumerate(SPAN[1]):
            mem.add(
                [{"role": "user", "content": text, "speaker": SPAN[0]}],
                user_id=spaces["span"],
                run_id=f"d{day}",
                occurred_at=T0 + timedelta(days=day, minutes=i),
            )
        for name, (speaker, turns) in STORIES.items():
            for i, text in enumerate(turns):
                mem.add(
                    [{"role": "user", "content": text, "speaker": speaker}],
                    user_id=spaces[name],
                    run_id=f"s{i}",
                    occurred_at=T0 + timedelta(days=7 * i),
                )
        # every turn extracted before the first recall: listing records no access, while
        # polling with recalls would give the memories found first use (activation) the
        # others lack
        deadline = time.monotonic() + 45
        for name, turns in [(n, t) for n, (_s, t) in STORIES.items()] + [("span", SPAN[1])]:
            while time.monotonic() < deadline:
                rows = mem.get_all(namespace=spaces[name])["results"]
                sources = {t for r in rows for t in r.get("source_turn_ids") or ()}
                if len(sources) >= len(turns):
                    break
                time.sleep(0.5)
        projected(settings)  # get_all read DuckDB; the questions ask Qdrant
        yield mem, spaces


def _until(
    mem: Memory, ns: str, question: str, ok: Callable[[list[dict[str, Any]]], bool]
) -> dict[str, Any]:
    deadline = time.monotonic() + 45
    while True:
        answer = mem.recall(question, namespace=ns, k=5)
        if ok(answer["results"]) or time.monotonic() > deadline:
            return answer
        time.sleep(0.5)


def _advice_and_plain(
    mem: Memory, ns: str, request: str, plain: str, marker: str
) -> tuple[int, list[dict[str, Any]], int, list[dict[str, Any]]]:
    """Where the memory holding ``marker`` ranks for the request for help and for the same
    words without the request (len(results) when it is not among them), with the results."""
    asked = _until(mem, ns, request, lambda r: any(marker in str(h["text"]) for h in r))["results"]
    told = mem.recall(plain, namespace=ns, k=5)["results"]
    return (
        next(i for i, h in enumerate(asked) if marker in str(h["text"])),
        asked,
        next((i for i, h in enumerate(told) if marker in str(h["text"])), len(told)),
        told,
    )


def test_a_request_for_help_puts_the_preference_first(
    told: tuple[Memory, dict[str, str]],
) -> None:
    mem, spaces = told
    at, hits, plain_at, plain = _advice_and_plain(
        mem,
        spaces["advice"],
        "Can you help me plan my writing sessions for the upcoming week?",
        "My writing sessions for the upcoming week.",
        "prefer",
    )
    ranked = [(h["category"], h["explain"].get("advice")) for h in hits]
    assert at == 0 and hits[0]["category"] == "preference", ranked
    assert hits[0]["explain"]["advice"] == ADVICE_LIFT, ranked
    # the same words without the request: no lift, the preference ranks lower
    assert "advice" not in plain[plain_at]["explain"]
    assert at < plain_at, (ranked, [h["category"] for h in plain])


def test_a_preference_said_as_one_thing_over_another_is_lifted_for_advice(
    told: tuple[Memory, dict[str, str]],
) -> None:
    mem, spaces = told
    at, hits, plain_at, plain = _advice_and_plain(
        mem,
        spaces["ranked"],
        "I'm looking at a few new phone models. What should I keep in mind comparing them?",
        "New phone models.",
        "over brand prestige",
    )
    texts = [str(h["text"]) for h in hits]
    assert hits[at]["category"] == "preference", texts
    assert hits[at]["explain"]["advice"] == ADVICE_LIFT and at <= 1, texts
    # the same words without the request: no lift, the preference ranks lower
    assert at < plain_at, (texts, [str(h["text"]) for h in plain])


def test_a_relation_in_the_question_is_searched_by_name(
    told: tuple[Memory, dict[str, str]],
) -> None:
    mem, spaces = told
    answer = _until(
        mem,
        spaces["relation"],
        "What does Rosa's husband do for a living?",
        lambda r: any("night shifts" in str(h["text"]) for h in r[:3]),
    )
    texts = [str(h["text"]) for h in answer["results"][:3]]
    assert any("night shifts in the ER" in t for t in texts), texts
    assert answer["renamed"] == [{"mention": "Rosa's husband", "name": "Marcus"}], answer


def test_a_question_for_a_slot_finds_its_holder(told: tuple[Memory, dict[str, str]]) -> None:
    mem, spaces = told
    hits = _until(
        mem,
        spaces["slot"],
        "Where does Lena live now?",
        lambda r: any("Ballard" in str(h["text"]) for h in r),
    )["results"]
    assert "Ballard" in str(hits[0]["text"]), [h["text"] for h in hits]
    assert hits[0]["explain"]["slot"] == SLOT_LIFT


def test_a_question_across_the_history_is_answered_across_it(
    told: tuple[Memory, dict[str, str]],
) -> None:
    mem, spaces = told
    question = (
        "Can you list the order in which I brought up different aspects of my garden project "
        "throughout our conversations? Mention ONLY and ONLY three items."
    )
    answer = _until(
        mem, spaces["span"], question, lambda r: any("tomatoes" in str(h["text"]) for h in r[:3])
    )
    assert answer["searched"] == "my garden project ?" and answer["spread"] is True, answer
    top = [str(h["text"]) for h in answer["results"][:3]]
    # the first day, the irrigation three weeks on and the harvest seven weeks on
    assert any("irrigation" in t for t in top) and any("tomatoes" in t for t in top), top
