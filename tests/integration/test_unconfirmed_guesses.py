"""A guess nobody confirms is archived a month on (``unconfirmed``, under the default daily
dream cycle and the rule extractor); a worry that says its own doubt is not a guess: the
user is worried, for sure, and what the worry is about stays recallable."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from tests.harness import own_worker
from tests.integration.test_edge_fading import _turn, _until

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
GUESS = "My flight might be on the Friday after Easter."
WORRY = "I'm kinda worried that my $12.99/month Canva Pro plan might not be enough for my resume."


def _created(log: list[Any]) -> dict[str, Any]:
    return {e.payload.text: e.payload for e in log if e.type == "MemoryCreated"}


async def said(own: Settings, ns: str, texts: list[str], at: datetime) -> dict[str, Any]:
    """``texts`` said a minute apart from ``at``; the memories made of them by text."""
    async with AsyncProducer(own) as p:
        for i, text in enumerate(texts):
            await p.publish(_turn(ns, i, text, at + timedelta(minutes=i)))
    return _created(await _until(own, ns, lambda g: len(_created(g)) >= len(texts)))


async def later(own: Settings, ns: str, text: str, at: datetime, ok: Any) -> list[Any]:
    """``text`` said at ``at`` (the daily cycles up to it run); the log once ``ok`` holds."""
    async with AsyncProducer(own) as p:
        await p.publish(_turn(ns, 99, text, at))
    return await _until(own, ns, ok)


def one(created: dict[str, Any], part: str) -> Any:
    [memory] = [m for text, m in created.items() if part in text]
    return memory


def _unconfirmed(log: list[Any]) -> set[str]:
    return {
        e.payload.memory_id
        for e in log
        if e.type == "MemoryArchived" and e.payload.rule == "unconfirmed"
    }


async def test_a_guess_is_archived_unconfirmed_and_a_worry_stays(
    settings: Settings, tmp_path: Path
) -> None:
    async with own_worker(settings, tmp_path, "unconfirmed") as own:
        ns = "guesses"
        created = await said(own, ns, [GUESS, WORRY], T0)
        guess, worry = one(created, "flight"), one(created, "Canva")
        assert guess.confidence < 0.4 <= worry.confidence, (guess, worry)
        at = T0 + timedelta(days=35)  # five weeks on
        log = await later(
            own, ns, "I repainted the hallway.", at, lambda g: guess.memory_id in _unconfirmed(g)
        )
        assert _unconfirmed(log) == {guess.memory_id}, _unconfirmed(log)
        [archived] = [
            e.payload
            for e in log
            if e.type == "MemoryArchived" and e.payload.memory_id == guess.memory_id
        ]
        assert archived.evidence["confidence"] < 0.4 and archived.evidence["age_days"] >= 30
