"""Evolution fires on its own under the default settings and the rule extractor: the
namespace's event time moves 6 hours past its first memory (a later turn is published)
and the worker writes an evolution report (``ConsolidationReported``, evidence ``kind:
evolution``, ``trigger: period``) at that turn's time; an hour of event time earlier it
had written none. The report on the log is what starts the trigger over."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from tests.harness import own_worker
from tests.integration.test_edge_fading import _turn, _until

T0 = datetime(2024, 1, 10, 9, tzinfo=UTC)


def _evolutions(log: list[Any]) -> list[Any]:
    return [
        e
        for e in log
        if e.type == "ConsolidationReported" and e.payload.evidence.get("kind") == "evolution"
    ]


async def test_evolution_runs_after_six_hours_of_event_time(
    settings: Settings, tmp_path: Path
) -> None:
    async with own_worker(settings, tmp_path, "evolve") as own:
        ns = "evolving"
        async with AsyncProducer(own) as p:
            await p.publish(_turn(ns, 0, "I work as a nurse at St Mary's hospital.", T0))
            await p.publish(
                _turn(ns, 1, "My sister Clara lives in Lisbon.", T0 + timedelta(hours=1))
            )
        log = await _until(
            own,
            ns,
            lambda g: (
                len(g) > 0
                and any(
                    e.type == "TurnsExtracted" and e.occurred_at >= T0 + timedelta(hours=1)
                    for e in g
                )
            ),
        )
        assert not _evolutions(log), _evolutions(log)  # an hour: not due

        later = T0 + timedelta(hours=7)
        async with AsyncProducer(own) as p:
            await p.publish(_turn(ns, 2, "I started learning the cello.", later))
        log = await _until(own, ns, lambda g: bool(_evolutions(g)))
        runs = _evolutions(log)
        assert len(runs) == 1, runs
        run = runs[0]
        assert run.occurred_at == later and run.producer == "evolution"
        assert run.payload.evidence == {"kind": "evolution", "trigger": "period"}
        assert run.payload.memories >= 2
