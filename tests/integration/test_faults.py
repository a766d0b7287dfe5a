"""The faults of issue 12 combined (tests/reliability/faults.py, small size): SIGKILLs while
turns arrive, poison queries before a kill, a recall every 0.2 s, a turn dated 9999, ids
nobody has, then a broker that restarts empty, recovered with `memstream recover`.

Strict: every phase must report 0 turns lost, 0 duplicate memories, 0 projections stalled
and health never wrong, with nothing else amiss. ``make faults`` runs a larger size.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.reliability.faults import FaultRun, run_faults


async def test_combined_faults_lose_nothing_and_health_tells(tmp_path: Path) -> None:
    run = FaultRun(
        turns=160,
        kills=2,
        seed=5,
        publish_seconds=10.0,
        settle_timeout=40.0,
        stall_after=15.0,
        # the documented recovery after a broker restart (README: Recovery)
        recover=tuple(os.environ.get("MEMSTREAM_FAULTS_RECOVER", "recover").split()),
    )
    report = await run_faults(tmp_path, run)
    print(report.describe())
    assert report.kills == 2
    for phase in report.phases:
        assert phase.clean(), phase.describe()
