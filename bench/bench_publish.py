"""SDK publish throughput vs a raw aiokafka producer loop, same broker, same run.

Both send the same number of ~250-byte turn events with acks=all and wait for every ack;
the SDK additionally builds and validates each event (what a producer pays for safety).
"""

from __future__ import annotations

import asyncio
import os
import time
from datetime import UTC, datetime, timedelta

from aiokafka import AIOKafkaProducer

from bench.broker import fresh_broker
from bench.figures import Figure
from memstream.consumers.producer import AsyncProducer, turn_event
from memstream.schemas.envelope import encode

N = int(os.environ.get("BENCH_PUBLISH_N", "30000"))
T0 = datetime(2024, 1, 1, tzinfo=UTC)
TEXT = "We decided to move the analytics warehouse to DuckDB next quarter, after the Kafka upgrade."


async def raw_loop(bootstrap: str, topic: str, payloads: list[bytes]) -> float:
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", linger_ms=5, max_batch_size=256 * 1024
    )
    await producer.start()
    try:
        started = time.perf_counter()
        futures = [
            await producer.send(topic, v, key=b"bench-ns-%d" % (i % 8))
            for i, v in enumerate(payloads)
        ]
        await asyncio.gather(*futures)
        return len(payloads) / (time.perf_counter() - started)
    finally:
        await producer.stop()


async def sdk_loop(settings: object, n: int) -> float:
    async with AsyncProducer(settings) as producer:  # type: ignore[arg-type]
        started = time.perf_counter()
        futures = []
        for i in range(n):
            env = turn_event(
                namespace=f"bench-ns-{i % 8}",
                session_id="s1",
                turn_id=f"t{i}",
                role="user",
                speaker="Ann",
                text=TEXT,
                occurred_at=T0 + timedelta(seconds=i),
                settings=producer.settings,
            )
            futures.append(await producer.send(env))
        await asyncio.gather(*futures)
        return n / (time.perf_counter() - started)


def run() -> list[Figure]:
    with fresh_broker() as settings:
        sample = turn_event(
            namespace="bench-ns-0",
            session_id="s1",
            turn_id="t0",
            role="user",
            speaker="Ann",
            text=TEXT,
            occurred_at=T0,
        )
        payloads = [encode(sample)] * N
        topic = f"{settings.topic_prefix}.turns"
        raw = asyncio.run(raw_loop(settings.bootstrap(), topic, payloads))
        sdk = asyncio.run(sdk_loop(settings, N))
    return [
        Figure(
            "SDK publish throughput",
            sdk,
            "events/s",
            raw,
            "raw aiokafka producer loop",
            notes=f"{N} events of {len(payloads[0])} bytes, acks=all; SDK builds+validates each event",
        )
    ]
