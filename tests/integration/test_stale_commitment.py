"""A task said with a deadline and never reported done goes stale under the defaults: the
rule extractor dates it ("by 8 March 2024" is its due date), it stays a pending task while
overdue, and 90 days past due the daily dream cycle supersedes it as ``stale_commitment``,
with the due date and the days overdue as evidence: over since the cycle found it stale (not
since its due date), and still there for questions about the past and, since nothing
replaced it, for one in the present too, below what holds now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.consumers.client import Memory
from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from tests.harness import eventually, own_worker
from tests.integration.test_edge_fading import _turn, _until

T0 = datetime(2024, 2, 1, 9, tzinfo=UTC)


async def test_an_overdue_task_goes_stale_after_ninety_days(
    settings: Settings, tmp_path: Path
) -> None:
    # the defaults: the daily dream cycle
    async with own_worker(settings, tmp_path, "stale") as own:
        ns = "tasks"
        async with AsyncProducer(own) as p:
            await p.publish(_turn(ns, 0, "I need to renew my passport by 8 March 2024.", T0))
        log = await _until(own, ns, lambda g: any(e.type == "MemoryCreated" for e in g))
        [task] = [e for e in log if e.type == "MemoryCreated"]
        assert task.payload.category == "commitment", task.payload
        assert task.payload.valid_until == datetime(2024, 3, 9, tzinfo=UTC)  # the due date

        async with AsyncProducer(own) as p:  # overdue, but only by a month: still pending
            await p.publish(
                _turn(
                    ns, 1, "We repainted the hallway a pale green colour.", T0 + timedelta(days=60)
                )
            )
        log = await _until(own, ns, lambda g: sum(e.type == "MemoryCreated" for e in g) >= 2)
        assert not [e for e in log if e.type in ("MemoryArchived", "MemorySuperseded")]

        async with AsyncProducer(own) as p:  # 90+ days past due
            await p.publish(
                _turn(
                    ns, 2, "We bought a second bookshelf for the study.", T0 + timedelta(days=150)
                )
            )

        def stale(g: list[Any]) -> list[Any]:
            return [
                e
                for e in g
                if e.type == "MemorySuperseded" and e.payload.reason == "stale_commitment"
            ]

        log = await _until(own, ns, stale)
        [over] = stale(log)
        assert over.payload.memory_id == task.payload.memory_id
        assert over.payload.superseded_by is None
        assert over.payload.evidence["due"].startswith("2024-03-09")
        assert over.payload.evidence["days_overdue"] >= 90
        # its truth did not end at the due date: it ends when the cycle found it stale
        assert over.payload.valid_until >= datetime(2024, 3, 9, tzinfo=UTC) + timedelta(days=90)
        assert not [e for e in log if e.type == "MemoryArchived"]
        # nothing replaced it: a question in the present still reaches it (the latest known
        # about the passport), marked superseded and with validity 0 (core/expiry.py)
        with Memory(settings=own) as mem:

            def found() -> list[Any]:
                asked = mem.recall("when do I need to renew my passport", namespace=ns)
                return [r for r in asked["results"] if r["memory_id"] == over.payload.memory_id]

            hit = eventually(found, lambda rs: bool(rs) and rs[0]["status"] == "superseded")
            assert hit and hit[0]["status"] == "superseded", hit
            assert hit[0]["explain"]["validity"] == 0.0, hit[0]["explain"]
