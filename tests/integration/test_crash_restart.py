"""Crash and restart: a scripted workload while the worker is SIGKILLed at random moments and
restarted on the same data directory. No turn lost, no memory duplicated, and `memstream
verify` finds the live projections identical to a clean rebuild from the log.

The driver is ``tests/reliability/driver.py``. ``make test`` runs a small size; ``make soak``
runs a large one (``SOAK_TURNS``, ``SOAK_KILLS``, ``SOAK_SEED`` choose it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memstream.infra.settings import Settings
from tests.reliability.driver import CrashRun, run_crash_restart


async def test_sigkill_at_random_moments_loses_and_duplicates_nothing(
    settings: Settings, tmp_path: Path
) -> None:
    run = CrashRun(turns=300, kills=3, seed=11, publish_seconds=20.0, startup_kills=0.3)
    report = await run_crash_restart(settings, tmp_path, run)
    print(report.summary())
    assert len(report.kills) == 3
    assert report.kills[0].published < report.published  # the first one dies mid-stream
    assert report.problems() == []


@pytest.mark.soak
@pytest.mark.skipif(os.environ.get("MEMSTREAM_SOAK") != "1", reason="long run: `make soak`")
async def test_soak_sigkill_at_random_moments(settings: Settings, tmp_path: Path) -> None:
    kills = int(os.environ.get("SOAK_KILLS", "12"))
    run = CrashRun(
        turns=int(os.environ.get("SOAK_TURNS", "2264")),  # the bundled set 4 times over
        kills=kills,
        seed=int(os.environ.get("SOAK_SEED", "20240917")),
        chunk=40,
        publish_seconds=10.0 * kills,  # the kills land while turns still arrive
        startup_kills=0.25,
        verify_running=True,
        settle_timeout=600.0,
    )
    report = await run_crash_restart(settings, tmp_path, run)
    print(report.summary())
    assert len(report.kills) == kills
    assert report.problems() == []
