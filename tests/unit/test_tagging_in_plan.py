"""Synaptic tagging, capture, expiry and flashbulb memories, as the write plan emits them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from memstream.core.embedding import HashingEmbedder
from memstream.core.facts import Fact
from memstream.core.gate import GateConfig
from memstream.core.memory_state import fold
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.signals import scan
from memstream.core.write_plan import BufferedTurn, Flush, plan_flush

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)


def flush(
    memory: NamespaceMemory, i: int, text: str, importance: float, at: datetime, session: str = "s1"
) -> list[Any]:
    turn = BufferedTurn(f"e{i}", f"t{i}", "user", "Ann", text, at, scan(text))
    fact = Fact(
        category="fact",
        text=f"fact {i}: {text}",
        confidence=0.9,
        importance=importance,
        source_turn_ids=(f"t{i}",),
    )
    return plan_flush(memory, Flush("ns", session, "idle", (turn,), (fact,), None), GateConfig())


def types(events: list[Any]) -> list[str]:
    return [e.type for e in events if e.type != "TurnsExtracted"]


def test_weak_memory_is_tagged_and_captured_by_a_strong_one() -> None:
    memory = NamespaceMemory("ns", HashingEmbedder())
    weak = flush(memory, 1, "The weather note was fine.", 0.2, T0)
    assert types(weak) == ["MemoryCreated", "SynapticTagged"]
    weak_id = weak[1].payload.memory_id
    strong = flush(
        memory, 2, "We signed the contract with the new supplier.", 0.9, T0 + timedelta(hours=1)
    )
    assert types(strong) == ["MemoryCreated", "TagCaptured"]
    captured = strong[-1].payload
    assert captured.memory_id == weak_id and captured.captured_by == strong[1].payload.memory_id
    assert captured.stability_after == captured.stability_before * 1.3
    assert memory.states[weak_id].tagged_until is None


def test_capture_only_within_the_ttl_and_only_in_the_session() -> None:
    memory = NamespaceMemory("ns", HashingEmbedder())
    flush(memory, 1, "The weather note was fine.", 0.2, T0)
    other = flush(
        memory,
        2,
        "We signed the contract with the new supplier.",
        0.9,
        T0 + timedelta(hours=1),
        session="s2",
    )
    assert "TagCaptured" not in types(other)  # another session
    late = flush(
        memory, 3, "The board approved the budget for next year.", 0.9, T0 + timedelta(hours=5)
    )
    assert types(late) == ["MemoryCreated", "TagExpired"]  # the 4 h TTL passed


def test_flashbulb_memories_are_pinned_and_important() -> None:
    memory = NamespaceMemory("ns", HashingEmbedder())
    events = flush(
        memory,
        1,
        "I am absolutely FURIOUS!!! The server crashed AGAIN and we lost EVERYTHING!!!",
        0.5,
        T0,
    )
    created = events[1].payload
    assert created.pinned and created.importance >= 0.9 and created.arousal >= 0.8


def test_fold_of_tag_events_is_the_live_state() -> None:
    memory = NamespaceMemory("ns", HashingEmbedder())
    log = flush(memory, 1, "The weather note was fine.", 0.2, T0)
    log += flush(
        memory, 2, "We signed the contract with the new supplier.", 0.9, T0 + timedelta(hours=1)
    )
    assert fold(log) == memory.states


def test_the_session_index_agrees_with_the_tagged_set() -> None:
    """``tagged_in`` (what the plan reads) is ``tagged`` of that session, as tags come, are
    captured and expire; and after a snapshot restore sets ``tagged`` on a fresh index."""
    memory = NamespaceMemory("ns", HashingEmbedder())
    texts = ["The weather note was fine.", "The lunch menu was okay.", "The bus was late."]
    for i, text in enumerate(texts):
        flush(memory, i, text, 0.2, T0 + timedelta(minutes=i), session=f"s{i % 2}")
    memory.tagged_in("s0")  # the index is built here and kept up from now on
    flush(memory, 7, "We signed the contract with the new supplier.", 0.9, T0 + timedelta(hours=1))
    flush(memory, 8, "The parking note was fine.", 0.2, T0 + timedelta(hours=2), session="s1")

    def expected(session: str) -> list[str]:
        return sorted(m for m in memory.tagged if memory.states[m].session_id == session)

    assert memory.tagged_in("s0") == expected("s0") != []
    assert memory.tagged_in("s1") == expected("s1")
    assert memory.tagged_in("s9") == []
    restored = NamespaceMemory("ns", HashingEmbedder())
    restored.states, restored.tagged = memory.states, set(memory.tagged)
    assert [restored.tagged_in(s) for s in ("s0", "s1")] == [expected("s0"), expected("s1")]
