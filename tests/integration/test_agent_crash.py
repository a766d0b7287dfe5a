"""An exception that escapes an agent (not a bad record: those are dead-lettered; a broker
write that failed for good, say) stops the worker with exit status 1, and the worker started
after it extracts every turn the crashed one held, once. Before, faust restarted the agent
alone: it read on past the held turns, nothing was committed beyond them and they were not
read again until the worker restarted (the committed offset stalled, the turns waited)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from memstream.infra.settings import Settings
from tests.harness import WorkerProcess
from tests.reliability.boundary_batch import extracted, publish_boundary_batch

pytestmark = pytest.mark.integration


async def test_an_agent_that_raises_stops_the_worker_and_its_turns_are_read_again(
    settings: Settings, tmp_path: Path
) -> None:
    # Ann's turn two days after her first: its dream-cycle boundary makes the write path's
    # agent flush the first one while it reads the batch (the flush the fake fails)
    own, want = await publish_boundary_batch(settings, tmp_path, "crash", others=6)
    # no idle flush: the agent's own flush is the one that fails (an exception in the idle
    # timer's flush stopped the worker before this change too)
    a = WorkerProcess(
        own, tmp_path / "a", entry="tests.fakes.failing_flush", buffer_idle_seconds="600"
    )
    a.start()
    try:
        assert a.proc is not None
        deadline = time.monotonic() + 60
        while a.proc.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        log = a.log.read_text()
        assert a.proc.returncode == 1, f"the worker should have stopped; log:\n{log[-3000:]}"
        assert "agent write-path crashed" in log and "injected" in log, log[-3000:]
    finally:
        a.stop()
    b = WorkerProcess(own, tmp_path / "b").start()
    try:
        deadline = time.monotonic() + 60
        while set(got := await extracted(own)) != want and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
    finally:
        b.stop()
    assert set(got) == want, f"never extracted: {sorted(want - set(got))}"
    assert max(got.values()) == 1, f"extracted twice: {[t for t, n in got.items() if n > 1]}"


async def test_a_worker_run_with_restarts_comes_back_after_a_crash_and_reads_on(
    settings: Settings, tmp_path: Path
) -> None:
    """`memstream worker --restarts 3`, run by hand with no process supervisor: the agent's
    crash stops the child worker, the parent starts it again, and every turn is extracted
    once; SIGTERM stops both, exit status 0."""
    own, want = await publish_boundary_batch(settings, tmp_path, "sup", others=6)
    w = WorkerProcess(
        own,
        tmp_path / "w",
        entry="tests.fakes.failing_flush",
        args=("--restarts", "3"),
        # the restarted worker's idle flush extracts what the batch left in the buffers
        buffer_idle_seconds="5",
        fail_once_marker=str(tmp_path / "failed-once"),
    )
    w.launch()
    try:
        assert w.proc is not None
        deadline = time.monotonic() + 90
        while set(got := await extracted(own)) != want and time.monotonic() < deadline:
            assert w.proc.poll() is None, f"the supervisor stopped: {w.log.read_text()[-3000:]}"
            await asyncio.sleep(0.5)
        log = w.log.read_text()
        assert "agent write-path crashed" in log and "injected" in log, log[-3000:]
        assert "restart 1 of 3" in log, log[-3000:]
        assert set(got) == want, f"never extracted: {sorted(want - set(got))}"
        assert max(got.values()) == 1, f"extracted twice: {[t for t, n in got.items() if n > 1]}"
        w.proc.terminate()
        assert w.proc.wait(30) == 0
    finally:
        w.stop()
