"""A worker stopped (SIGTERM, a graceful stop as in a rolling deploy) while it is half-way
through a batch of turns: the turns it had not read yet are not committed, so the worker
that takes over reads them. faust acknowledges a whole batch when its loop is left; before
the write path held its batches, these turns were committed unread and lost."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstream.infra.settings import Settings
from tests.fakes.responses_server import Delay, FakeResponsesServer, serve_in_thread, worker_env
from tests.harness import WorkerProcess
from tests.reliability.boundary_batch import extracted, publish_boundary_batch


@pytest.fixture
def hanging_llm() -> Iterator[FakeResponsesServer]:
    with serve_in_thread(default=Delay(300)) as server:  # every extraction call hangs
        yield server


async def test_a_stop_half_way_through_a_batch_loses_no_turn(
    settings: Settings, hanging_llm: FakeResponsesServer, tmp_path: Path
) -> None:
    # the worker extracts Ann's first turn before reading on (the call hangs); the other
    # tenants' turns it has not read when it is stopped
    own, want = await publish_boundary_batch(settings, tmp_path, "stopmid", others=8)
    a = WorkerProcess(
        own,
        tmp_path / "a",
        **worker_env(hanging_llm, openai_timeout_s="200", openai_max_retries="0"),
    ).start()
    try:
        deadline = time.monotonic() + 60
        while hanging_llm.in_flight == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        # (more calls may follow: the idle timer extracts other tenants' buffers meanwhile)
        assert hanging_llm.in_flight >= 1, "the worker should be waiting on the model"
        stopped = time.monotonic()
        a.stop()  # SIGTERM: faust stops its agents and commits
        assert a.proc is not None and a.proc.returncode is not None
        assert time.monotonic() - stopped < 15, "a graceful stop, not the harness's SIGKILL"
    finally:
        a.stop()
    b = WorkerProcess(own.with_(data_dir=str(tmp_path / "b-data")), tmp_path / "b").start()
    try:
        deadline = time.monotonic() + 60
        while (got := set(await extracted(own))) != want and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
    finally:
        b.stop()
    assert got == want, f"lost: {sorted(want - got)}"
