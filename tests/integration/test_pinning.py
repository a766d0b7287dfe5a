"""Pin, lock and unpin through the SDK, the CLI and the broker, as events: a pinned memory
says so; a locked one is not superseded by a later, conflicting fact (the new fact stands
beside it) and the audit trail shows who locked it."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, memstream

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 9, tzinfo=UTC)


def eventually(fn: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.3)


def test_pin_lock_and_unpin_are_events_and_lock_holds(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"pin-{random.randrange(10**8)}"
    with Memory(settings=settings) as mem:
        mem.add("I live in Porto.", user_id=ns, run_id="s1", occurred_at=T0)
        porto = eventually(
            lambda: [r for r in mem.get_all(user_id=ns)["results"] if "Porto" in r["memory"]],
            bool,
        )[0]
        mem.pin(porto["id"], namespace=ns)
        assert eventually(lambda: mem.get(porto["id"], namespace=ns)["pinned"], bool)
        out = memstream(settings, "lock", porto["id"], "--namespace", ns, "--reason", "verified")
        assert out.returncode == 0, out.stderr
        assert eventually(lambda: mem.get(porto["id"], namespace=ns)["immutable"], bool)
        # a conflicting fact later: without the lock it would supersede Porto
        mem.add("I live in Braga.", user_id=ns, run_id="s2", occurred_at=T0 + timedelta(days=3))
        braga = eventually(
            lambda: [r for r in mem.get_all(user_id=ns)["results"] if "Braga" in r["memory"]],
            bool,
        )
        assert braga, "the new fact is kept beside the locked one"
        kept = mem.get(porto["id"], namespace=ns)
        assert kept["status"] == "active" and kept["superseded_by"] is None
        mem.unpin(porto["id"], namespace=ns)
        after = eventually(lambda: mem.get(porto["id"], namespace=ns), lambda m: not m["pinned"])
        assert not after["pinned"] and not after["immutable"]
        kinds = [e["type"] for e in mem.history(porto["id"], namespace=ns)]
        assert kinds.count("MemoryPinned") == 3
        audit = memstream(settings, "audit", porto["id"])
        assert "locked (pinned, immutable)" in audit.stdout and "unpinned" in audit.stdout
