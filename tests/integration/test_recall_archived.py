"""Archived memories are forgotten, not gone: recall leaves them out, and returns them below
the rest when asked (``include_archived`` through the SDK and HTTP), the factor in explain."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 2, 1, 9, tzinfo=UTC)


def test_archived_memories_come_back_only_when_asked(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"arch-{uuid.uuid4().hex[:8]}"
    with Memory(settings=settings) as mem:
        mem.add(
            [
                {"role": "user", "content": "I keep the spare bike key in the blue tin."},
                {"role": "user", "content": "The garage code for the bike shed is 4471."},
            ],
            user_id=ns,
            occurred_at=T0,
        )
        deadline = time.monotonic() + 60
        while len(mem.recall("bike key tin shed", namespace=ns)["results"]) < 2:
            assert time.monotonic() < deadline, mem.get_all(namespace=ns)
            time.sleep(0.5)
        tin = next(
            r for r in mem.recall("bike key tin", namespace=ns)["results"] if "tin" in r["text"]
        )
        mem.delete(tin["memory_id"], namespace=ns)  # archived, never erased
        deadline = time.monotonic() + 30
        while any(
            r["memory_id"] == tin["memory_id"]
            for r in mem.recall("bike key tin", namespace=ns)["results"]
        ):
            assert time.monotonic() < deadline
            time.sleep(0.5)
        asked = mem.recall("bike key tin", namespace=ns, filters={"include_archived": True})
        found = [r for r in asked["results"] if r["memory_id"] == tin["memory_id"]]
        assert found and found[0]["status"] == "archived", asked["results"]
        assert found[0]["explain"]["archived"] == 0.5
