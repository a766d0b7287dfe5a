"""What the benchmarks that run a real worker share: raw publishing, the raw aiokafka
consume-and-produce loop (the baseline), a worker subprocess with the projections off, and
a tail of the memory log that collects the events the worker wrote."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from memstream.infra.settings import Settings
from memstream.streams.status import wait_until_ready

ROOT = Path(__file__).resolve().parent.parent


async def publish_raw(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]]) -> None:
    """(key, value) records, partitioned by key with the client's default partitioner (the
    one the SDK uses), every one acknowledged."""
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", linger_ms=5, max_batch_size=512 * 1024
    )
    await producer.start()
    try:
        futures = [await producer.send(topic, value, key=key) for key, value in records]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        await admin.close()


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


def raw_baseline(settings: Settings, source: str, n: int) -> float:
    """The raw loop over the first ``n`` records of ``source``, into a topic of its own."""
    sink = f"{settings.topic_prefix}.raw-out"
    asyncio.run(create_topic(settings.bootstrap(), sink, settings.partitions))
    return asyncio.run(raw_loop(settings.bootstrap(), source, sink, n))


@contextlib.contextmanager
def worker_process(
    settings: Settings,
    *,
    projections: str = "none",
    datadir: Path | None = None,
    **env: str,
) -> Iterator[subprocess.Popen[bytes]]:
    """A ``memstream worker`` on the broker of ``settings``, projections off unless named
    (most benchmarks measure the agents; the projections have their own), ready when
    yielded. Its settings' data directory is ``datadir / "data"``."""
    datadir = datadir or Path(tempfile.mkdtemp(prefix="bench-worker-"))
    full_env = dict(
        os.environ,
        MEMSTREAM_KAFKA_BOOTSTRAP=settings.bootstrap(),
        MEMSTREAM_TOPIC_PREFIX=settings.topic_prefix,
        MEMSTREAM_DATA_DIR=str(datadir / "data"),
        MEMSTREAM_PROJECTIONS=projections,
        PYTHONPATH=str(ROOT),
        **env,
    )
    started = time.time()
    with (datadir / "worker.log").open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memstream.consumers.cli", "worker", "--datadir", str(datadir)],
            cwd=ROOT,
            env=full_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_ready(datadir, 90, after=started)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def recorded_at(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["recorded_at"]).timestamp()


async def collect(
    settings: Settings,
    types: frozenset[str],
    units: Callable[[dict[str, Any]], int],
    n: int,
    stall: float = 120.0,
) -> list[dict[str, Any]]:
    """Tail the memory log from its start and keep the events of ``types`` (as plain dicts)
    until ``units`` summed over them reaches ``n``, or nothing new came for ``stall`` seconds.

    One consumer reads each record once with a plain JSON parse: re-reading and strictly
    decoding the whole log on every poll would take CPU from the worker being measured.
    """
    topic = f"{settings.topic_prefix}.memory.log"
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.bootstrap(), enable_auto_commit=False, group_id=None
    )
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(settings.partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        kept: list[dict[str, Any]] = []
        done, last_new = 0, time.monotonic()
        while done < n and time.monotonic() - last_new < stall:
            batch = await consumer.getmany(timeout_ms=500, max_records=5000)
            for records in batch.values():
                for record in records:
                    event = orjson.loads(record.value)
                    if event.get("type") in types:
                        kept.append(event)
                        done += units(event)
                        last_new = time.monotonic()
        return kept
    finally:
        await consumer.stop()
