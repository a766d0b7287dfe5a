"""Knowledge updates in the rule extractor and the write plan: a move, a new job, a change
of preference or tool name the slot they change (and what was given up), the write plan
supersedes the old holder with the evidence, and a fold of the log agrees."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstream.core.embedding import HashingEmbedder
from memstream.core.extract.slots import prefers_item
from memstream.core.facts import Fact, TurnView
from memstream.core.gate import GateConfig
from memstream.core.memory_state import fold
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.rule_extractor import extract_rules
from memstream.core.signals import scan
from memstream.core.write_plan import BufferedTurn, Flush, plan_flush
from memstream.schemas.envelope import Envelope

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)


def facts(text: str, at: datetime = T0, turn_id: str = "t1") -> list[Fact]:
    turn = TurnView(turn_id=turn_id, role="user", speaker="Maya", text=text, occurred_at=at)
    return extract_rules([turn])


@pytest.mark.parametrize(
    ("said", "text", "slot", "replaces"),
    [
        ("Actually I moved from Lisbon to Porto.", "Maya lives in Porto", "location", ()),
        ("I relocated to Porto last month.", "Maya lives in Porto", "location", ()),
        ("I left Acme and joined Initech as a data engineer.",
         "Maya works at Initech as a data engineer", "employer", ()),
        ("I switched jobs, now I work at Initech.", "Maya works at Initech", "employer", ()),
        ("I started a new job at Initech as a data engineer.",
         "Maya works at Initech as a data engineer", "employer", ()),
        ("I got a job at Google!", "Maya works at Google", "employer", ()),
        ("I'm now living in Berlin.", "Maya is now living in Berlin", "location", ()),
        ("I'm now working at Initech.", "Maya is now working at Initech", "employer", ()),
        ("I prefer Rust over Go now.", "Maya prefers Rust over Go now", "preference:go|rust", ("go",)),
        ("I switched from Go to Rust.", "Maya switched from Go to Rust", "preference:go|rust", ("go",)),
        ("I no longer use Go.", "Maya no longer uses Go", None, ("go",)),
        ("I switched to Neovim for Python.", "Maya switched to Neovim for Python", "tool:python", ()),
        ("I'm no longer vegetarian.", "Maya is no longer vegetarian", "diet", ()),
    ],
)  # fmt: skip
def test_a_change_names_its_slot(
    said: str, text: str, slot: str | None, replaces: tuple[str, ...]
) -> None:
    found = {f.text: f for f in facts(said)}
    assert text in found, list(found)
    assert (found[text].slot, found[text].replaces) == (slot, replaces)


def test_someone_joined_or_left_is_no_employer() -> None:
    # a company joined is an employer; a person joined for dinner is not, nor left somewhere
    assert [f.slot for f in facts("I joined Stripe in March.")] == ["employer"]
    for said in ("I joined Kelly for dinner.", "I left Tom at the station."):
        assert [f.slot for f in facts(said)] == [None], said


def test_a_move_keeps_the_event_beside_the_state() -> None:
    found = facts("I moved from Lisbon to Porto last month.")
    assert [f.text for f in found] == [
        "Maya lives in Porto",
        "Maya moved from Lisbon to Porto in February 2024",
    ]
    state, event = found
    assert state.slot == "location" and event.slot is None
    assert state.valid_from == event.valid_from == datetime(2024, 2, 1, tzinfo=UTC)


def test_a_home_taken_where_one_moves_is_where_one_lives() -> None:
    found = facts("We bought a house in Richmond and moved in last weekend.")
    assert (found[0].text, found[0].slot) == ("Maya and others live in Richmond", "location")
    found = facts("Sam and I signed a lease on a bigger apartment in Berkeley. We move August 1.")
    assert [f.slot for f in found] == [None, None]  # the move is in another sentence
    # a house bought where nobody moves is no home of the speaker's
    assert [f.slot for f in facts("We bought a house in Richmond to rent out.")] == [None]


def test_a_plan_to_move_is_no_state_yet() -> None:
    assert [f.text for f in facts("I will move to Porto next month.")] == [
        "Maya will move to Porto in April 2024"
    ]


@pytest.mark.parametrize(
    ("text", "item", "prefers"),
    [
        ("Maya prefers Go for backend work", "go", True),
        ("Maya uses Go for scripts", "go", True),
        ("Maya prefers Rust over Go now", "go", False),
        ("Maya switched from Go to Rust", "go", False),
        ("Maya prefers Rust over Go now", "rust", True),
        ("Maya prefers Golang", "go", False),
    ],
)
def test_prefers_item(text: str, item: str, prefers: bool) -> None:
    assert prefers_item(text, item) is prefers


def run(script: list[tuple[int, str]]) -> tuple[NamespaceMemory, list[Envelope[Any]]]:
    memory = NamespaceMemory("ns", HashingEmbedder())
    log: list[Envelope[Any]] = []
    for i, (day, text) in enumerate(script):
        at = T0 + timedelta(days=day, minutes=i)
        turn = BufferedTurn(f"e{i}", f"t{i}", "user", "Maya", text, at, scan(text, role="user"))
        found = tuple(facts(text, at, f"t{i}"))
        flush = Flush("ns", f"s{day}", "high_signal", (turn,), found, None)
        log.extend(plan_flush(memory, flush, GateConfig()))
    return memory, log


def superseded(log: list[Envelope[Any]]) -> dict[str, tuple[str, Envelope[Any]]]:
    """old text -> (the text that superseded it, the MemorySuperseded event)."""
    texts = {e.payload.memory_id: e.payload.text for e in log if e.type == "MemoryCreated"}
    return {
        texts[e.payload.memory_id]: (texts[e.payload.superseded_by], e)
        for e in log
        if e.type == "MemorySuperseded"
    }


def test_changes_supersede_with_evidence_and_the_fold_agrees() -> None:
    memory, log = run(
        [
            (0, "I live in Lisbon."),
            (0, "I work at Acme as a data analyst."),
            (0, "I prefer Go for backend work."),
            (60, "Actually I moved from Lisbon to Porto."),
            (60, "I left Acme and joined Initech as a data engineer."),
            (60, "I prefer Rust over Go now."),
        ]
    )
    ended = superseded(log)
    assert {old: new for old, (new, _) in ended.items()} == {
        "Maya lives in Lisbon": "Maya lives in Porto",
        "Maya works at Acme as a data analyst": "Maya works at Initech as a data engineer",
        "Maya prefers Go for backend work": "Maya prefers Rust over Go now",
    }
    _, given_up = ended["Maya prefers Go for backend work"]
    assert given_up.payload.reason == "given_up"
    assert given_up.payload.evidence["given_up"] == ["go"]
    assert given_up.causation_id  # the flush that decided it
    active = {s.text for s in memory.states.values() if s.active}
    assert "Maya lives in Porto" in active and "Maya lives in Lisbon" not in active
    rebuilt = fold(log)
    assert {m: s.status for m, s in rebuilt.items()} == {
        m: s.status for m, s in memory.states.items()
    }


@pytest.mark.parametrize(
    ("said", "text", "cancels"),
    [
        ("My marathon is cancelled.", "Maya's marathon is cancelled", ("marathon",)),
        ("We called off the trip to Japan because of work.",
         "Maya and others called off the trip to Japan because of work", ("trip Japan",)),
        ("The wedding was called off.", "The wedding was called off", ("wedding",)),
        ("I cancelled my gym membership.", "Maya cancelled Maya's gym membership",
         ("gym membership",)),
    ],
)  # fmt: skip
def test_a_plan_called_off_names_what(said: str, text: str, cancels: tuple[str, ...]) -> None:
    found = {f.text: f for f in facts(said)}
    assert text in found, list(found)
    assert (found[text].subject, found[text].cancels) == ("maya", cancels)


def test_a_cancelled_plan_is_superseded_and_the_new_one_is_not() -> None:
    memory, log = run(
        [
            (0, "I'm running the Dublin marathon in October."),
            (0, "I love my marathon shoes."),  # not a plan: stays
            (40, "I'm doing the Porto half marathon instead, my marathon is cancelled."),
        ]
    )
    texts = {e.payload.memory_id: e.payload.text for e in log if e.type == "MemoryCreated"}
    (ended,) = [e for e in log if e.type == "MemorySuperseded"]
    assert texts[ended.payload.memory_id] == "Maya is running the Dublin marathon in October"
    assert ended.payload.reason == "cancelled"
    assert ended.payload.evidence["cancelled"] == ["marathon"]
    instead = "Maya is doing the Porto half marathon instead, Maya's marathon is cancelled"
    assert texts[ended.payload.superseded_by] == instead
    active = {s.text for s in memory.states.values() if s.active}
    assert instead in active and "Maya loves Maya's marathon shoes" in active, active
    rebuilt = fold(log)
    assert {m: s.status for m, s in rebuilt.items()} == {
        m: s.status for m, s in memory.states.items()
    }


@pytest.mark.parametrize(
    ("said", "moves"),
    [
        ("My dentist appointment was moved to Friday.", ("dentist appointment",)),
        ("We postponed the trip to Japan until June.", ("trip Japan",)),
        ("The meeting got pushed back to next Tuesday.", ("meeting",)),
        ("I moved the standup to 10am.", ("standup",)),
        # not a plan moved to a time: a thing moved somewhere, or the speaker moving house
        ("The couch was moved to the garage.", ()),
        ("I moved to Porto last month.", ()),
    ],
)  # fmt: skip
def test_a_plan_moved_to_another_time_names_what(said: str, moves: tuple[str, ...]) -> None:
    assert {m for f in facts(said) for m in f.moves} == set(moves)


def test_a_moved_plan_is_superseded_by_the_new_time_only_when_it_is_the_same_plan() -> None:
    memory, log = run(
        [
            (0, "I have a dentist appointment on March 20."),
            (0, "I have a call with Matthew on March 21."),
            (0, "I have a call with Priya on March 22."),
            (5, "I rescheduled the call with Matthew to March 28."),
            (6, "My dentist appointment was moved to March 27."),
        ]
    )
    ended = {old: (e.payload.reason, new) for old, (new, e) in superseded(log).items()}
    assert ended == {
        "Maya has a dentist appointment on March 20": (
            "rescheduled",
            "Maya's dentist appointment was moved to March 27",
        ),
        "Maya has a call with Matthew on March 21": (
            "rescheduled",
            "Maya rescheduled the call with Matthew to March 28",
        ),
    }, ended  # the call with Priya is another call
    rebuilt = fold(log)
    assert {m: s.status for m, s in rebuilt.items()} == {
        m: s.status for m, s in memory.states.items()
    }


def test_an_intolerance_is_no_way_of_eating_and_a_retirement_says_the_job() -> None:
    """Tried as a new user would: "I'm lactose intolerant" superseded "I've been vegetarian
    for ten years" (both in the diet slot)."""
    assert [f.slot for f in facts("I've been vegetarian for ten years.")] == ["diet"]
    for said in ("I'm lactose intolerant.", "I eat kosher.", "I don't eat pork."):
        assert [f.slot for f in facts(said)] == [None], said
    assert [f.slot for f in facts("I retired from teaching in 2020.")] == ["job_title"]
