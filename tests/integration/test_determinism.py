"""Determinism: the same input file, ingested twice into clean systems, gives the same memory
log: the same events with the same ids, payloads and event times, in the same order per
namespace. Only ``recorded_at`` (the wall clock of the writer) may differ; see the README
section "Determinism" for what else may and why.

Both runs use the default buffer settings (5 s wall-clock idle, daily dream cycle), so the
flush decisions and dream cycles are the ones a user gets."""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from bench.eval_data import CONVERSATIONS_FILE, DATA_DIR
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.topics import BY_ROLE
from tests.harness import WorkerProcess, memstream, tenant_copies, write_interleaved
from tests.reliability.driver import LogTail

#: may differ between runs: the writer's wall clock
WALL_CLOCK_FIELDS = ("recorded_at",)
ROUNDS = 2


async def _one_run(base: Settings, workdir: Path, source: Path) -> dict[str, list[Any]]:
    defaults = Settings()
    own = base.with_(
        topic_prefix=f"msdet{uuid.uuid4().hex[:8]}",
        data_dir=str(workdir / "data"),
        buffer_idle_seconds=defaults.buffer_idle_seconds,
        buffer_max_turns=defaults.buffer_max_turns,
        projections="duckdb",
    )
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    worker = WorkerProcess(own, workdir / "worker", projections="duckdb")
    try:
        await asyncio.to_thread(worker.start, 90.0)
        out = await asyncio.to_thread(
            memstream, own, "ingest", str(source), "--wait", "--wait-timeout", "120"
        )
        assert out.returncode == 0, out.stdout + out.stderr
    finally:
        await asyncio.to_thread(worker.stop)
    tail = await LogTail(own.bootstrap(), BY_ROLE["memory_log"].name(own.topic_prefix)).start()
    try:
        records = await tail.poll(idle=1.0)
    finally:
        await tail.stop()
    by_namespace: dict[str, list[Any]] = defaultdict(list)
    seen: set[str] = set()
    for r in sorted(records, key=lambda r: (r.partition, r.offset)):
        env = decode(r.value)
        if env.event_id in seen:  # a repeated record (none expected in a clean run)
            continue
        seen.add(env.event_id)
        raw = orjson.loads(r.value)
        for name in WALL_CLOCK_FIELDS:
            raw.pop(name, None)
        by_namespace[env.namespace].append(raw)
    return dict(by_namespace)


def _two_sessions_a_day(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The bundled conversations with every second session moved to the day of the one
    before, two hours after it began: a tenant that talks twice a day, so a session's last
    turns wait in their buffer while the next session of the same tenant is read."""
    starts: dict[tuple[str, str], datetime] = {}
    for row in rows:
        starts.setdefault((row["namespace"], row["session_id"]), _at(row))
    order: dict[str, list[str]] = defaultdict(list)
    for ns, session in starts:
        order[ns].append(session)
    shift: dict[tuple[str, str], timedelta] = {}
    for ns, sessions in order.items():
        for i, session in enumerate(sessions):
            moved_to = starts[(ns, sessions[i - 1])] + timedelta(hours=2) if i % 2 else None
            shift[(ns, session)] = (moved_to - starts[(ns, session)]) if moved_to else timedelta()
    out = [
        {
            **row,
            "occurred_at": (_at(row) + shift[(row["namespace"], row["session_id"])]).isoformat(),
        }
        for row in rows
    ]
    return sorted(out, key=lambda row: (row["namespace"], _at(row)))


def _at(row: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(row["occurred_at"])


def _first_difference(a: list[Any], b: list[Any]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"event {i}:\n  run 1: {orjson.dumps(x)[:600]!r}\n  run 2: {orjson.dumps(y)[:600]!r}"
    return f"lengths {len(a)} and {len(b)}"


async def test_same_file_twice_gives_the_same_memory_log(
    settings: Settings, tmp_path: Path
) -> None:
    source = tmp_path / "conversations.jsonl"
    rows = _two_sessions_a_day(
        [
            orjson.loads(line)
            for line in (DATA_DIR / CONVERSATIONS_FILE).read_bytes().splitlines()
            if line.strip()
        ]
    )
    write_interleaved(source, tenant_copies(rows, ROUNDS))
    # side by side: each worker runs while the other one competes for the CPU
    first, second = await asyncio.gather(
        _one_run(settings, tmp_path / "run1", source),
        _one_run(settings, tmp_path / "run2", source),
    )
    assert sorted(first) == sorted(second)
    types = defaultdict(int)
    for events in first.values():
        for e in events:
            types[e["type"]] += 1
    assert types["MemoryCreated"] > 50 and types["ConsolidationReported"] > 0, dict(types)
    differing = {
        ns: _first_difference(first[ns], second[ns]) for ns in first if first[ns] != second[ns]
    }
    assert not differing, "\n".join(f"{ns}: {d}" for ns, d in differing.items())
