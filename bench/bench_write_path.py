"""Write-path throughput (rule extractor) against faust's consume-only ceiling and a raw
aiokafka consume-and-produce loop, all on one fresh broker in the same run."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from bench.broker import fresh_broker
from bench.figures import Figure
from bench.workload import turns
from consumers.kafka_read import read_topic
from infra.settings import Settings
from schemas.envelope import decode, encode
from streams.status import wait_until_ready

N = int(os.environ.get("BENCH_WRITE_N", "20000"))
ROOT = Path(__file__).resolve().parent.parent


async def publish_raw(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]]) -> None:
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", linger_ms=5, max_batch_size=512 * 1024
    )
    await producer.start()
    try:
        futures = [await producer.send(topic, value, key=key) for key, value in records]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def raw_loop(bootstrap: str, source: str, sink: str, n: int) -> float:
    """Consume-and-produce with plain aiokafka: the floor any framework pays for Kafka I/O."""
    consumer = AIOKafkaConsumer(
        source,
        bootstrap_servers=bootstrap,
        group_id="bench-raw",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
    )
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    await consumer.start()
    await producer.start()
    try:
        seen, started = 0, 0.0
        while seen < n:
            batch = await consumer.getmany(timeout_ms=1000, max_records=1000)
            if batch and not started:
                started = time.perf_counter()
            futures = [
                await producer.send(sink, r.value, key=r.key) for rs in batch.values() for r in rs
            ]
            await asyncio.gather(*futures)
            seen += len(futures)
            await consumer.commit()
        return n / (time.perf_counter() - started)
    finally:
        await consumer.stop()
        await producer.stop()


async def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        await admin.close()


def faust_ceiling(bootstrap: str, topic: str, n: int) -> float:
    out = Path(tempfile.mkdtemp()) / "ceiling.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.faust_ceiling", bootstrap, topic, str(n), str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 180
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        data = orjson.loads(out.read_bytes())
        return float(data["n"]) / float(data["last"] - data["first"])
    finally:
        proc.terminate()
        proc.wait(20)


async def covered_span(settings: Settings, n: int, timeout: float = 300) -> tuple[int, float]:
    """(turns covered by TurnsExtracted events, wall seconds from first to last such event)."""
    deadline = time.monotonic() + timeout
    topic = f"{settings.topic_prefix}.memory.log"
    while True:
        covered, first, last = 0, float("inf"), 0.0
        async for record in read_topic(settings.bootstrap(), topic):
            env = decode(record.value)
            if env.type == "TurnsExtracted":
                covered += len(env.payload.turns)
                stamp = env.recorded_at.timestamp()
                first, last = min(first, stamp), max(last, stamp)
        if covered >= n or time.monotonic() > deadline:
            return covered, last - first
        await asyncio.sleep(1.0)


def write_path_rate(settings: Settings, n: int) -> tuple[float, int]:
    datadir = Path(tempfile.mkdtemp(prefix="bench-worker-"))
    # Projections off: this measures the write path; the projections have their own benchmark.
    env = dict(
        os.environ,
        MEMSTREAM_KAFKA_BOOTSTRAP=settings.bootstrap(),
        MEMSTREAM_TOPIC_PREFIX=settings.topic_prefix,
        MEMSTREAM_BUFFER_IDLE_SECONDS="1",
        MEMSTREAM_DATA_DIR=str(datadir / "data"),
        MEMSTREAM_PROJECTIONS="none",
        PYTHONPATH=str(ROOT),
    )
    started = time.time()
    log = (datadir / "worker.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "consumers.cli", "worker", "--datadir", str(datadir)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_until_ready(datadir, 90, after=started)
        covered, span = asyncio.run(covered_span(settings, n))
        return (covered / span if span > 0 else 0.0), covered
    finally:
        proc.terminate()
        proc.wait(30)


def run() -> list[Figure]:
    events = list(turns(N))
    records = [(e.key, encode(e)) for e in events]
    size = sum(len(v) for _k, v in records) / len(records)
    with fresh_broker() as settings:
        source = f"{settings.topic_prefix}.turns"
        asyncio.run(publish_raw(settings.bootstrap(), source, records))
        asyncio.run(create_topic(settings.bootstrap(), "bench.raw-out", settings.partitions))
        raw = asyncio.run(raw_loop(settings.bootstrap(), source, "bench.raw-out", N))
        ceiling = faust_ceiling(settings.bootstrap(), source, N)
        rate, covered = write_path_rate(settings, N)
    note = f"{N} turns of {size:.0f} bytes on average, 4 partitions, one worker, rule extractor"
    if covered < N:
        note += f"; only {covered} turns covered before the timeout"
    return [
        Figure(
            "write path turns/s vs faust consume-only",
            rate,
            "turns/s",
            ceiling,
            "faust consume-only agent (take_events)",
            notes=note,
        ),
        Figure(
            "write path turns/s vs raw loop",
            rate,
            "turns/s",
            raw,
            "raw aiokafka consume-and-produce loop",
            notes=note,
        ),
    ]
