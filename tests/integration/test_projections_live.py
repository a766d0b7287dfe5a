"""Projections in a running worker: SQL while it runs, verify after a long run and after a
SIGKILL mid-stream, and duplicate delivery leaves every projection unchanged."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
from aiokafka import AIOKafkaProducer

from bench.eval_data import load_conversations
from memstream.consumers.kafka_read import read_topic
from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.projections.duckdb_projection import DuckDBProjection, diff_digests
from memstream.projections.layout import Layout
from memstream.schemas.topics import BY_ROLE
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess, memstream, turn_from_row
from tests.integration.test_write_path import covered, memory_log


async def wait_covered(s: Settings, namespaces: set[str], n: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        total = 0
        for ns in namespaces:
            total += len(covered(await memory_log(s, ns)))
        if total >= n:
            return
        await asyncio.sleep(1.0)
    raise AssertionError(f"only {total} of {n} turns extracted")


def wait_projected(s: Settings, expected_memory_events: int, timeout: float = 60) -> None:
    worker = running_worker(s.data_dir)
    assert worker is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = httpx.post(
            f"{worker['api_url']}/sql", json={"sql": "SELECT count(*) FROM memory_log"}
        ).json()
        if body["rows"][0][0] >= expected_memory_events:
            return
        time.sleep(0.5)
    raise AssertionError("projection did not catch up")


async def test_kill_restart_verify_and_duplicates(settings: Settings, tmp_path: Path) -> None:
    own = settings.with_(topic_prefix="msproj", data_dir=str(tmp_path / "data"))
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    turns = load_conversations()[:300]
    namespaces = {t["namespace"] for t in turns}
    first = WorkerProcess(own, tmp_path / "w1").start()
    try:
        async with AsyncProducer(own) as p:
            envs = [turn_from_row(t) for t in turns]
            await p.publish_many(envs[:150])
            await asyncio.sleep(1.5)  # the worker is mid-stream
            first.kill()
            await p.publish_many(envs[150:])
    finally:
        first.stop()
    second = WorkerProcess(own, tmp_path / "w2").start()
    try:
        await wait_covered(own, namespaces, len(turns))
        log_events = 0
        for ns in namespaces:
            log_events += len(await memory_log(own, ns))
        wait_projected(own, log_events)
        result = memstream(own, "sql", "SELECT count(*) AS n FROM turns", "--format", "json")
        assert result.returncode == 0, result.stderr
        assert orjson.loads(result.stdout.splitlines()[0])["n"] == len(
            turns
        )  # every turn exactly once
        result = memstream(own, "verify")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "duckdb: identical" in result.stdout and "qdrant: identical" in result.stdout

        # duplicate delivery: republish already-processed records byte for byte
        before = memstream(
            own, "sql", "SELECT * FROM memories ORDER BY memory_id", "--format", "json"
        ).stdout
        raw: list[Any] = [
            r
            async for r in read_topic(own.bootstrap(), BY_ROLE["memory_log"].name(own.topic_prefix))
        ]
        turn_raw = [
            r async for r in read_topic(own.bootstrap(), BY_ROLE["turns"].name(own.topic_prefix))
        ]
        producer = AIOKafkaProducer(bootstrap_servers=own.bootstrap(), acks="all")
        await producer.start()
        try:
            for r in raw[::3] + turn_raw[::5]:
                await producer.send_and_wait(r.topic, r.value, key=r.key, partition=r.partition)
        finally:
            await producer.stop()
        await asyncio.sleep(4.0)
        after = memstream(
            own, "sql", "SELECT * FROM memories ORDER BY memory_id", "--format", "json"
        ).stdout
        assert after == before
        assert memstream(own, "verify").returncode == 0
    finally:
        second.stop()
    offline = memstream(own, "verify")  # and with no worker: straight from the files
    assert offline.returncode == 0, offline.stdout + offline.stderr

    # the Parquet archive outlives Kafka retention: a rebuild from it equals the live projection
    replayed = memstream(
        own,
        "replay",
        "--projection",
        "duckdb",
        "--from-archive",
        "--no-switch",
        "--progress",
        "off",
    )
    assert replayed.returncode == 0, replayed.stderr
    layout = Layout(own.data_path)
    live = DuckDBProjection(layout.duckdb(), {})
    from_archive = DuckDBProjection(layout.duckdb(_latest_version(layout)), {})
    try:
        assert diff_digests(live.digest(), from_archive.digest()) == []
    finally:
        live.close()
        from_archive.close()


def _latest_version(layout: Layout) -> str:
    versions = sorted(int(p.stem[1:]) for p in (layout.root / "duckdb").glob("v*.duckdb"))
    return f"v{versions[-1]}"
