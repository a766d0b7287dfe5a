"""The idle rule is for liveness only: a worker that has a backlog of turns on the log does not
take its tenants for quiet ones, however short ``buffer_idle_seconds`` is. Otherwise a busy
or slow worker would extract a tenant's buffers early while the tenant's next turns wait to
be read, and the flushes (and so the memories) would depend on the worker's speed."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson

from bench.eval_data import CONVERSATIONS_FILE, DATA_DIR
from memstream.consumers.kafka_read import read_topic
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.topics import BY_ROLE
from tests.harness import WorkerProcess, memstream, tenant_copies, write_interleaved

ROUNDS = 3  # copies of the bundled conversations, interleaved: a backlog of ~1,700 turns


async def _flushes(s: Settings) -> dict[str, list[Any]]:
    """Each namespace's TurnsExtracted events, in log order."""
    out: dict[str, list[Any]] = defaultdict(list)
    async for r in read_topic(s.bootstrap(), BY_ROLE["memory_log"].name(s.topic_prefix)):
        env = decode(r.value)
        if env.type == "TurnsExtracted":
            out[env.namespace].append(env)
    return out


async def test_a_worker_behind_its_log_flushes_by_event_time_not_by_idle(
    settings: Settings, tmp_path: Path
) -> None:
    rows = [
        orjson.loads(line)
        for line in (DATA_DIR / CONVERSATIONS_FILE).read_bytes().splitlines()
        if line.strip()
    ]
    by_ns = tenant_copies(rows, ROUNDS)
    source = tmp_path / "backlog.jsonl"
    write_interleaved(source, by_ns)  # tenants interleaved line by line
    own = settings.with_(topic_prefix=f"msidle{uuid.uuid4().hex[:8]}", data_dir=str(tmp_path))
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    out = await asyncio.to_thread(memstream, own, "ingest", str(source))  # all on the log first
    assert out.returncode == 0, out.stdout + out.stderr
    total = sum(len(q) for q in by_ns.values())
    worker = WorkerProcess(own, tmp_path / "w", buffer_idle_seconds="0.2").start()
    try:
        deadline = time.monotonic() + 240
        while True:
            flushes = await _flushes(own)
            done = {
                (ns, t.turn_id) for ns, fs in flushes.items() for e in fs for t in e.payload.turns
            }
            if len(done) >= total or time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
    finally:
        worker.stop()
    assert len(done) == total, f"{len(done)} of {total} turns extracted"
    for ns in by_ns:
        triggers = [e.payload.trigger for e in flushes[ns]]
        # an idle flush only once the worker read the whole backlog: the tenant's last ones
        first_idle = triggers.index("idle") if "idle" in triggers else len(triggers)
        assert set(triggers[first_idle:]) <= {"idle"}, (ns, triggers)
        assert first_idle > 0, (ns, triggers)
