"""Evolution fires on its own under the default settings and the rule extractor: the
namespace's event time moves 6 hours past its first memory (a later turn is published)
and the worker writes an evolution report (``ConsolidationReported``, evidence ``kind:
evolution``, ``trigger: period``) at that turn's time; an hour of event time earlier it
had written none. The report on the log is what starts the trigger over.

In that run the two memories the write path kept apart about one fact (a short statement,
then a longer restatement the gate scores under its update band) merge: the kept memory
says what both said and cites both turns, the other is archived into it, and the evidence
carries the match and each member's usage history (the recall that returned them)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from tests.harness import own_worker
from tests.integration.test_edge_fading import _turn, _until

T0 = datetime(2024, 1, 10, 9, tzinfo=UTC)
SHORT = "My sister Clara lives in Lisbon."
LONGER = "My sister Clara lives in Lisbon with her two kids and a very loud parrot named Kiwi."


def _evolutions(log: list[Any]) -> list[Any]:
    return [
        e
        for e in log
        if e.type == "ConsolidationReported" and e.payload.evidence.get("kind") == "evolution"
    ]


def _reinforced_by(e: Any, query_id: str) -> bool:
    return e.type == "MemoryReinforced" and e.payload.evidence.get("query_id") == query_id


async def test_evolution_runs_after_six_hours_of_event_time_and_merges(
    settings: Settings, tmp_path: Path
) -> None:
    async with own_worker(settings, tmp_path, "evolve") as own:
        ns = "evolving"
        async with AsyncProducer(own) as p:
            await p.publish(_turn(ns, 0, "I work as a nurse at St Mary's hospital.", T0))
            await p.publish(_turn(ns, 1, SHORT, T0 + timedelta(hours=1)))
            await p.publish(_turn(ns, 2, LONGER, T0 + timedelta(hours=2)))
        log = await _until(
            own, ns, lambda g: sum(e.type == "MemoryCreated" and "Clara" in e.payload.text
                                   for e in g) >= 2,
        )  # fmt: skip
        clara = {e.payload.source_turn_ids[0]: e.payload for e in log if e.type == "MemoryCreated"}
        short, longer = clara["t1"], clara["t2"]
        assert short.category == longer.category and "Kiwi" in longer.text, clara
        assert not _evolutions(log), _evolutions(log)  # two hours: not due

        recalled = T0 + timedelta(hours=3)
        async with AsyncProducer(own) as p:  # a recall returned both: their usage history
            await p.access(
                namespace=ns,
                query_id="q-clara",
                memories=[(longer.memory_id, 0.9), (short.memory_id, 0.7)],
                query="where does my sister live",
                occurred_at=recalled,
            )
            # the access and the turns travel on different topics: the turn that triggers
            # evolution is sent once the access tracker has folded the access (its
            # co-activation reinforcement is on the log), or the run may see no usage yet
            await _until(own, ns, lambda g: any(_reinforced_by(e, "q-clara") for e in g))
            later = T0 + timedelta(hours=7)
            await p.publish(_turn(ns, 3, "I started learning the cello.", later))
        log = await _until(own, ns, lambda g: bool(_evolutions(g)))
        runs = _evolutions(log)
        assert len(runs) == 1, runs
        run = runs[0]
        assert run.occurred_at == later and run.producer == "evolution"
        assert run.payload.evidence == {"kind": "evolution", "trigger": "period"}
        assert run.payload.memories >= 3 and run.payload.counts == {"merge": 1}

        caused = [e for e in log if e.causation_id == run.event_id]
        [kept] = [e for e in caused if e.type == "MemoryUpdated"]
        [folded] = [e for e in caused if e.type == "MemoryArchived"]
        members = {short.memory_id, longer.memory_id}
        assert {kept.payload.memory_id, folded.payload.memory_id} == members
        assert folded.payload.merged_into == kept.payload.memory_id
        assert folded.payload.rule == "evolution_merge"
        # every fact and every source turn kept
        assert kept.payload.text.rstrip(".") == longer.text.rstrip(".")
        assert set(kept.payload.source_turn_ids) == {"t1", "t2"}
        assert set(kept.payload.entities) >= set(short.entities) | set(longer.entities)
        ev = kept.payload.evidence
        assert ev["rule"] == "evolution_merge" and ev["covered_by"] == {
            short.memory_id: longer.memory_id
        }
        assert set(ev["match"].values()) == {"covered"}
        for m in members:  # each member's usage history: the recall that returned it
            assert ev["usage"][m]["accesses"] == [recalled.isoformat()], ev["usage"]
