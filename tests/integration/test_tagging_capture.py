"""Synaptic tagging and capture through the broker with the defaults and the rule extractor:
a trivial remark becomes a weak memory and is tagged; a life event said minutes later in the
same session is strong and captures it (its stability raised), and ``memstream audit`` shows
both steps with the memory that captured it."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, memstream_json
from tests.integration.test_write_path import memory_log

pytestmark = pytest.mark.integration

T0 = datetime(2024, 5, 1, 12, tzinfo=UTC)
WEAK = "I had a tuna sandwich for lunch at the little park near the office today."
STRONG = "Big news: I got engaged to Priya last night, we are getting married in June!"


async def _captured(s: Settings, namespace: str) -> list[Any]:
    deadline = time.monotonic() + 45
    while True:
        log = await memory_log(s, namespace)
        if any(e.type == "TagCaptured" for e in log) or time.monotonic() > deadline:
            return log
        await asyncio.sleep(0.5)


async def test_a_weak_memory_is_tagged_and_captured_by_a_strong_one(
    settings: Settings, worker: WorkerProcess, namespace: str
) -> None:
    async with AsyncProducer(settings) as p:
        for i, text in enumerate((WEAK, STRONG)):
            await p.turn(
                namespace=namespace,
                session_id="s1",
                turn_id=f"tag-{i}",
                role="user",
                speaker="Dana",
                text=text,
                occurred_at=T0 + timedelta(minutes=5 * i),
            )
    log = await _captured(settings, namespace)
    created = {e.payload.source_turn_ids[0]: e.payload for e in log if e.type == "MemoryCreated"}
    weak, strong = created["tag-0"], created["tag-1"]
    assert weak.importance < 0.5 <= 0.7 <= strong.importance, (weak, strong)
    (tagged,) = [e.payload for e in log if e.type == "SynapticTagged"]
    (captured,) = [e.payload for e in log if e.type == "TagCaptured"]
    assert tagged.memory_id == captured.memory_id == weak.memory_id
    assert captured.captured_by == strong.memory_id
    assert captured.stability_after > captured.stability_before
    trail = memstream_json(settings, "audit", weak.memory_id, "--json", timeout=60)
    kinds = [step["kind"] for step in trail["steps"]]
    assert "SynapticTagged" in kinds and "TagCaptured" in kinds, kinds
