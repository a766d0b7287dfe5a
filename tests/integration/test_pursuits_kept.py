"""What a user is working on is no trivia: under the default daily dream cycle and the rule
extractor, small talk is archived a year on (``fact_archival``) while a pursuit said beside
it ("I'm having trouble debugging ...") stays active, as a project's facts must for the
questions about it months later."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from tests.harness import own_worker
from tests.integration.test_edge_fading import _turn, _until

T0 = datetime(2024, 2, 1, 9, tzinfo=UTC)
SMALL_TALK = "I went for a walk."
PURSUIT = "I'm having trouble debugging an issue with my resume analyzer project."


def _created(log: list[Any]) -> dict[str, Any]:
    return {e.payload.text: e.payload for e in log if e.type == "MemoryCreated"}


def _archived(log: list[Any]) -> dict[str, str]:
    return {e.payload.memory_id: e.payload.rule for e in log if e.type == "MemoryArchived"}


async def test_a_pursuit_outlives_small_talk(settings: Settings, tmp_path: Path) -> None:
    async with own_worker(settings, tmp_path, "pursuit") as own:
        ns = "pursuits"
        async with AsyncProducer(own) as p:
            await p.publish(_turn(ns, 0, SMALL_TALK, T0))
            await p.publish(_turn(ns, 1, PURSUIT, T0 + timedelta(minutes=1)))
        log = await _until(own, ns, lambda g: len(_created(g)) >= 2)
        [walk] = [m for t, m in _created(log).items() if "walk" in t]
        [work] = [m for t, m in _created(log).items() if "resume analyzer" in t]
        assert walk.importance < 0.3 <= work.importance, (walk, work)
        async with AsyncProducer(own) as p:  # a year of event time: daily cycles run
            await p.publish(_turn(ns, 2, "We bought a bookshelf.", T0 + timedelta(days=366)))
        log = await _until(own, ns, lambda g: walk.memory_id in _archived(g))
        assert _archived(log)[walk.memory_id] == "fact_archival"
        assert work.memory_id not in _archived(log), _archived(log)
