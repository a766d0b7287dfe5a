"""What a user is working on is no trivia: under the default daily dream cycle and the rule
extractor, small talk is archived a year on (``fact_archival``) while a pursuit said beside
it ("I'm having trouble debugging ...") stays active, as a project's facts must for the
questions about it months later."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.infra.settings import Settings
from tests.harness import own_worker
from tests.integration.test_unconfirmed_guesses import later, one, said

T0 = datetime(2024, 2, 1, 9, tzinfo=UTC)
SMALL_TALK = "I went for a walk."
PURSUIT = "I'm having trouble debugging an issue with my resume analyzer project."


def _archived(log: list[Any]) -> dict[str, str]:
    return {e.payload.memory_id: e.payload.rule for e in log if e.type == "MemoryArchived"}


async def test_a_pursuit_outlives_small_talk(settings: Settings, tmp_path: Path) -> None:
    async with own_worker(settings, tmp_path, "pursuit") as own:
        ns = "pursuits"
        created = await said(own, ns, [SMALL_TALK, PURSUIT], T0)
        walk, work = one(created, "walk"), one(created, "resume analyzer")
        assert walk.importance < 0.3 <= work.importance, (walk, work)
        at = T0 + timedelta(days=366)  # a year on
        log = await later(
            own, ns, "We bought a bookshelf.", at, lambda g: walk.memory_id in _archived(g)
        )
        assert _archived(log)[walk.memory_id] == "fact_archival"
        assert work.memory_id not in _archived(log), _archived(log)
