"""The write plan on a scripted conversation: decisions, determinism, and live == rebuilt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from memstream.core.embedding import HashingEmbedder
from memstream.core.facts import TurnView
from memstream.core.gate import GateConfig
from memstream.core.memory_state import fold
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.rule_extractor import extract_rules
from memstream.core.signals import scan
from memstream.core.write_plan import BufferedTurn, Flush, covered_turns, plan_flush
from memstream.schemas import decode, encode
from memstream.schemas.envelope import Envelope

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
SCRIPT = [
    "I live in Boston.",
    "My favorite editor is Vim.",
    "I live in Boston.",
    "Actually, I live in Denver now.",
    "ok thanks",
    "My favorite editor is Vim and I use it daily for Python work.",
]


def run(script: list[str]) -> tuple[NamespaceMemory, list[Envelope[Any]]]:
    memory = NamespaceMemory("ns", HashingEmbedder())
    log: list[Envelope[Any]] = []
    for i, text in enumerate(script):
        at = T0 + timedelta(minutes=i)
        turn = BufferedTurn(f"e{i}", f"t{i}", "user", "Ann", text, at, scan(text, role="user"))
        facts = (
            ()
            if turn.skipped
            else tuple(
                extract_rules(
                    [
                        TurnView(
                            turn_id=turn.turn_id,
                            role="user",
                            speaker="Ann",
                            text=text,
                            occurred_at=at,
                        )
                    ]
                )
            )
        )
        log.extend(
            plan_flush(memory, Flush("ns", "s1", "high_signal", (turn,), facts, None), GateConfig())
        )
    return memory, log


def decisions(log: list[Envelope[Any]]) -> list[tuple[str, str]]:
    return [
        (e.type, e.payload.evidence.get("decision", ""))
        for e in log
        if e.type != "TurnsExtracted" and not e.type.startswith("Relation")
    ]


def test_scripted_conversation_decisions() -> None:
    memory, log = run(SCRIPT)
    assert decisions(log) == [
        ("MemoryCreated", "create"),
        ("MemoryCreated", "create"),
        ("DuplicateSkipped", "skip-duplicate"),
        ("MemoryCreated", "supersede"),
        ("MemorySuperseded", "supersede"),
        ("MemoryUpdated", "update"),
    ]
    # the supersession is also an edge of the graph, both ways round on the two memories
    edges = [(e.payload.relation, e.payload.rule) for e in log if e.type == "RelationAdded"]
    assert ("supersedes", "supersession") in edges
    assert ("contradicts", "slot_contradiction") in edges
    boston = next(s for s in memory.states.values() if "Boston" in s.text)
    denver = next(s for s in memory.states.values() if "Denver" in s.text)
    assert boston.status == "superseded" and boston.superseded_by == denver.memory_id
    assert boston.valid_until is not None  # invalidated, never deleted
    assert covered_turns(log) == {f"t{i}" for i in range(len(SCRIPT))}  # every turn accounted for


def test_every_memory_event_names_its_cause() -> None:
    _memory, log = run(SCRIPT)
    heads = {e.event_id for e in log if e.type == "TurnsExtracted"}
    decided = {e.event_id for e in log if e.type != "TurnsExtracted"}
    for e in log:
        if e.type.startswith("Relation"):  # an edge names the decision that implied it
            assert e.causation_id in decided
        elif e.type != "TurnsExtracted":
            assert e.causation_id in heads
        else:
            assert e.causation_id and e.causation_id.startswith("e")


def test_deterministic() -> None:
    assert [encode(e) for e in run(SCRIPT)[1]] == [encode(e) for e in run(SCRIPT)[1]]


def test_fold_of_the_log_is_the_live_state() -> None:
    memory, log = run(SCRIPT)
    rebuilt = fold([decode(encode(e)) for e in log])
    assert rebuilt == memory.states


def test_a_fact_the_log_refuses_is_reported_not_raised() -> None:
    """A fact whose text the event schema refuses (a control character, a model's overlong
    text) is named in the extraction record's evidence; the flush's other facts land. The
    record was rebuilt from ``__dataclass_fields__``, which lists the ClassVar ``TYPE`` too:
    every flush with a refused fact raised, and a worker's agent would have stopped."""
    from memstream.core.facts import Fact

    memory = NamespaceMemory("ns", HashingEmbedder())
    text = "I live in Boston."
    turn = BufferedTurn("e0", "t0", "user", "Ann", text, T0, scan(text, role="user"))
    facts = (
        Fact(
            category="fact", text="Ann lives in \x02Boston", confidence=0.9, source_turn_ids=("t0",)
        ),
        Fact(category="fact", text="Ann lives in Boston", confidence=0.9, source_turn_ids=("t0",)),
    )
    log = plan_flush(memory, Flush("ns", "s1", "high_signal", (turn,), facts, None), GateConfig())
    head = log[0]
    assert head.type == "TurnsExtracted"
    rejected = head.payload.evidence["rejected_facts"]
    assert [r["fact"] for r in rejected] == ["Ann lives in \x02Boston"]
    assert "control" in rejected[0]["error"]
    assert [e.payload.text for e in log if e.type == "MemoryCreated"] == ["Ann lives in Boston"]
