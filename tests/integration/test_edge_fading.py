"""Edges fade with disuse under the default settings (the daily dream cycle): a causal edge
nobody uses loses confidence as the namespace's event time moves on, and leaves the graph
below the floor, each step an event of the edge keeper with the idle days behind it; the
link of the assistant's reply to the request it answers stays as it was written."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from tests.harness import own_worker, turn_from_row
from tests.integration.test_write_path import memory_log

T0 = datetime(2024, 3, 2, 9, tzinfo=UTC)


def _turn(ns: str, i: int, text: str, at: datetime, role: str = "user") -> Any:
    return turn_from_row(
        {
            "namespace": ns,
            "session_id": f"s{min(i, 9)}" if role == "user" else "s1",
            "turn_id": f"t{i}",
            "role": role,
            "speaker": "Sam" if role == "user" else "assistant",
            "text": text,
            "occurred_at": at.isoformat(),
        }
    )


async def _until(s: Settings, ns: str, ok: Any, timeout: float = 60) -> list[Any]:
    deadline = time.monotonic() + timeout
    while True:
        log = await memory_log(s, ns)
        if ok(log) or time.monotonic() > deadline:
            return log
        await asyncio.sleep(0.5)


async def test_an_unused_edge_fades_then_leaves(settings: Settings, tmp_path: Path) -> None:
    # the defaults: the daily dream cycle
    async with own_worker(settings, tmp_path, "fade") as own:
        ns = "fading"
        async with AsyncProducer(own) as p:
            await p.publish(
                _turn(ns, 0, "I started training for the Berlin marathon in March.", T0)
            )
            await p.publish(
                _turn(
                    ns,
                    1,
                    "My knee has been hurting because of the marathon training.",
                    T0 + timedelta(days=5),
                )
            )
            await p.publish(
                _turn(
                    ns,
                    10,
                    "Knee pain from marathon training is common. Cut your weekly mileage for a "
                    "while, add strength work for your hips and quads, and see a physiotherapist "
                    "if it still hurts after two weeks.",
                    T0 + timedelta(days=5, minutes=1),
                    role="assistant",
                )
            )
        log = await _until(
            own,
            ns,
            lambda g: (
                any(e.type == "RelationAdded" and e.payload.rule == "reply" for e in g)
                and any(e.type == "RelationAdded" and e.payload.relation == "causes" for e in g)
            ),
        )
        replies = {
            (e.payload.memory_id, e.payload.target_id)
            for e in log
            if e.type == "RelationAdded" and e.payload.rule == "reply"
        }
        assert replies, [(e.type, getattr(e.payload, "rule", None)) for e in log]
        added = [e for e in log if e.type == "RelationAdded" and e.payload.relation == "causes"]
        assert added, [e.type for e in log]
        first = added[0].payload.confidence

        async with AsyncProducer(own) as p:  # ten months pass: the edge fades
            await p.publish(
                _turn(
                    ns, 2, "We repainted the hallway a pale green colour.", T0 + timedelta(days=300)
                )
            )

        def faded(g: list[Any]) -> list[Any]:
            return [
                e for e in g if e.type == "RelationAdded" and "faded_from" in e.payload.evidence
            ]

        log = await _until(own, ns, faded)
        [fade] = faded(log)[:1]
        assert fade.payload.relation == "causes" and fade.payload.confidence < first
        assert fade.payload.rule == "causal_wording" and fade.payload.evidence["idle_days"] >= 290
        assert fade.producer == "edge-keeper"

        async with AsyncProducer(own) as p:  # years: it leaves the graph
            await p.publish(
                _turn(
                    ns, 3, "We bought a second bookshelf for the study.", T0 + timedelta(days=900)
                )
            )
        log = await _until(own, ns, lambda g: any(e.type == "RelationRemoved" for e in g))
        removed = [e for e in log if e.type == "RelationRemoved"]
        assert removed and removed[0].payload.reason == "faded", [e.type for e in log]
        # the reply's links: never faded, never removed, 900 days on
        touched = [
            e
            for e in log
            if e.producer == "edge-keeper" and (e.payload.memory_id, e.payload.target_id) in replies
        ]
        assert touched == [], touched
