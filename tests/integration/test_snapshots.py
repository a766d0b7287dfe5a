"""Partition snapshots through the broker: the running worker refreshes its partitions'
snapshots from the log (``snapshot_every_events`` is 40 here: the default 20,000 would need
that many events); a restart loads each partition from its snapshot and folds only the
log's tail, with the same state as a fold from the start (a re-delivered turn is still
recognised, new turns are extracted once, `memstream verify` finds the projections
identical); a damaged snapshot is ignored, saying so, the partition is folded from the
start and a new snapshot written after that load."""

from __future__ import annotations

import asyncio
import random
import re
import time
from pathlib import Path
from typing import Any

from bench.eval_data import load_conversations
from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from tests.harness import WorkerProcess, memstream, turn_from_row
from tests.integration.test_projections_live import wait_covered, wait_projected
from tests.integration.test_write_path import covered, memory_log

WRITTEN = r"snapshot at offset \d+ written"


async def _log_size(s: Settings, namespaces: set[str]) -> int:
    return sum([len(await memory_log(s, ns)) for ns in namespaces])


def _loads(log: str) -> list[str]:
    return re.findall(r"partition \d+ loaded[^\n]*", log)


async def test_snapshots_are_refreshed_loaded_and_distrusted_when_damaged(
    settings: Settings, tmp_path: Path
) -> None:
    datadir = tmp_path / "w"
    own = settings.with_(topic_prefix=f"snap{random.randrange(10**6)}", data_dir=str(datadir))
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    rows = load_conversations()[:90]
    namespaces = {t["namespace"] for t in rows}
    envs = [turn_from_row(t) for t in rows]

    async def run(publish: list[Any], expected: int, until: str | None = None) -> str:
        worker = WorkerProcess(own, datadir, snapshot_every_events="40")
        seen = worker.log.stat().st_size if worker.log.exists() else 0
        worker.start()
        try:
            async with AsyncProducer(own) as p:
                await p.publish_many(publish)
            await wait_covered(own, namespaces, expected)
            wait_projected(own, await _log_size(own, namespaces))
            deadline = time.monotonic() + 60
            while until and not re.search(until, worker.log.read_bytes()[seen:].decode()):
                assert time.monotonic() < deadline, worker.log.read_text()[-3000:]
                await asyncio.sleep(1)
        finally:
            worker.stop()
        assert worker.proc is not None and worker.proc.returncode == 0
        return worker.log.read_bytes()[seen:].decode(errors="replace")  # this run's lines

    # the first start finds an empty log; the running worker refreshes from the log
    await run(envs[:70], 70, until=WRITTEN)
    snapshots = sorted((datadir / "snapshots").glob("*.snapshot"))
    assert snapshots

    # the next start: from the snapshots, only the tail is folded; a re-sent turn is
    # recognised as extracted, the new ones are extracted once
    log = await run([envs[0], *envs[70:90]], 90)
    loads = _loads(log)
    # by partition: under load a rebalance can make the worker load a partition twice
    from_snapshot = {x.split()[1] for x in loads if "from a snapshot" in x}
    assert len(from_snapshot) == len(snapshots), loads
    turns = [t for ns in namespaces for t in covered(await memory_log(own, ns))]
    assert len(turns) == len(set(turns)) == 90  # every turn exactly once, envs[0] not again
    verify = memstream(own, "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "duckdb: identical" in verify.stdout and "qdrant: identical" in verify.stdout

    # a damaged snapshot is ignored, saying so; the fold from the start gives the same
    # state, and that load writes a new snapshot
    damaged = snapshots[0]
    raw = bytearray(damaged.read_bytes())
    raw[-10] ^= 0xFF
    damaged.write_bytes(bytes(raw))
    log = await run(envs[:1], 90, until=WRITTEN)
    assert "checksum mismatch" in log, log[-3000:]
    assert re.search(WRITTEN, log), log[-3000:]
    turns = [t for ns in namespaces for t in covered(await memory_log(own, ns))]
    assert len(turns) == len(set(turns)) == 90
