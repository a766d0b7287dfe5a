"""Running the pure write plan over a few user texts, one flush per text (the rule
extractor, the hashing embedder): the shared set-up of the plan's unit and property tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from memstream.core.embedding import HashingEmbedder
from memstream.core.facts import TurnView
from memstream.core.gate import GateConfig
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.relations import RelationConfig
from memstream.core.rule_extractor import extract_rules
from memstream.core.signals import scan
from memstream.core.write_plan import DEFAULT_RELATIONS, BufferedTurn, Flush, plan_flush

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)


def planned(
    texts: Sequence[str],
    *,
    step: timedelta = timedelta(days=1),
    sessions: int | None = None,
    relations: RelationConfig = DEFAULT_RELATIONS,
    memory: NamespaceMemory | None = None,
    after: Callable[[NamespaceMemory], None] | None = None,
) -> tuple[NamespaceMemory, list[Any]]:
    """The namespace's memory and the log after one flush per text (text i at T0 + i*step,
    in session i, or i % ``sessions``); ``after`` sees the memory after each flush."""
    memory = memory or NamespaceMemory("ns", HashingEmbedder())
    log: list[Any] = []
    for i, text in enumerate(texts):
        at = T0 + step * i
        turn = BufferedTurn(f"e{i}", f"t{i}", "user", "Sam", text, at, scan(text, role="user"))
        view = TurnView(turn_id=turn.turn_id, role="user", speaker="Sam", text=text, occurred_at=at)
        session = f"s{i % sessions}" if sessions else f"s{i}"
        facts = tuple(extract_rules([view]))
        flush = Flush("ns", session, "high_signal", (turn,), facts, None)
        log.extend(plan_flush(memory, flush, GateConfig(), relations=relations))
        if after is not None:
            after(memory)
    return memory, log
