"""``make demo``: the whole pipeline end to end on the embedded defaults.

Starts the embedded broker (unless MEMSTREAM_KAFKA_BOOTSTRAP points at one), creates the
topics, starts a worker, ingests the bundled sample conversations plus a few malformed
records, shows what arrived and what was dead-lettered, and shuts everything down.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from aiokafka import AIOKafkaProducer

from consumers.ingest import IngestReport, ingest_file
from consumers.kafka_read import read_topic
from consumers.producer import AsyncProducer
from infra.broker import EmbeddedBroker
from infra.settings import Settings, load
from infra.topics import ensure_topics
from schemas.envelope import decode
from schemas.topics import BY_ROLE
from streams.deadletter import DeadLetter, decode_dead_letter
from streams.status import wait_until_ready

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample_conversations.jsonl"

MALFORMED = {
    "truncated JSON": b'{"type": "ConversationTurn", "payload": ',
    "invalid UTF-8": b'{"text": "\xc3\x28"}',
    "unknown event type": b'{"event_id": "e1", "type": "Teleport", "schema_version": 1, '
    b'"occurred_at": "2024-05-01T09:00:00Z", "namespace": "acme", "payload": {}}',
}


def step(title: str) -> None:
    print(f"\n== {title}", flush=True)


@contextlib.contextmanager
def broker_for(settings: Settings) -> Iterator[Settings]:
    if os.environ.get("MEMSTREAM_KAFKA_BOOTSTRAP"):
        print(f"using the broker at {settings.bootstrap()}")
        yield settings
        return
    with EmbeddedBroker() as broker:
        print(f"embedded broker (Tansu, memory storage) on {broker.bootstrap}")
        yield settings.with_(kafka_bootstrap=broker.bootstrap)


@contextlib.contextmanager
def worker_for(settings: Settings, datadir: Path) -> Iterator[subprocess.Popen[bytes]]:
    env = dict(
        os.environ,
        MEMSTREAM_KAFKA_BOOTSTRAP=settings.bootstrap(),
        MEMSTREAM_TOPIC_PREFIX=settings.topic_prefix,
        PYTHONPATH=str(ROOT),
    )
    log = datadir / "worker.log"
    started = time.time()
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "consumers.cli", "worker", "--datadir", str(datadir)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
    try:
        status = wait_until_ready(datadir, timeout=90, after=started)
        print(
            f"worker pid {proc.pid} holds {len(status.get('assigned', []))} partitions (log: {log})"
        )
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


async def publish_malformed(settings: Settings) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap(), acks="all")
    await producer.start()
    try:
        for raw in MALFORMED.values():
            await producer.send_and_wait(
                BY_ROLE["turns"].name(settings.topic_prefix), raw, key=b"acme"
            )
    finally:
        await producer.stop()


async def show_arrivals(settings: Settings) -> None:
    per_session: Counter[tuple[str, str]] = Counter()
    examples: list[str] = []
    async for record in read_topic(
        settings.bootstrap(), BY_ROLE["turns"].name(settings.topic_prefix)
    ):
        with contextlib.suppress(Exception):
            env = decode(record.value)
            per_session[(env.namespace, env.session_id or "-")] += 1
            if len(examples) < 4 and env.payload.role == "user":
                examples.append(
                    f"  [{env.namespace} p{record.partition}@{record.offset}] "
                    f"{env.occurred_at:%Y-%m-%d %H:%M} {env.payload.speaker}: {env.payload.text}"
                )
    for (ns, session), n in sorted(per_session.items()):
        print(f"  {ns:8} {session:16} {n:3} turns")
    print("\n".join(examples))


async def wait_for_dead_letters(
    settings: Settings, expected: int, timeout: float = 30.0
) -> list[DeadLetter]:
    deadline = time.monotonic() + timeout
    while True:
        letters = [
            decode_dead_letter(r.value)
            async for r in read_topic(
                settings.bootstrap(), BY_ROLE["dlq"].name(settings.topic_prefix)
            )
        ]
        if len(letters) >= expected or time.monotonic() > deadline:
            return letters
        await asyncio.sleep(0.5)


def main() -> int:
    started = time.monotonic()
    base = load()
    workdir = Path(tempfile.mkdtemp(prefix="memstream-demo-"))
    with broker_for(base.with_(data_dir=str(workdir))) as settings:
        step("topics")
        for s in asyncio.run(
            ensure_topics(settings.bootstrap(), settings.topic_prefix, settings.partitions)
        ):
            print(f"  {s.name:28} {s.partitions} partitions")
        step("worker")
        with worker_for(settings, workdir):
            step(f"ingest {SAMPLE.relative_to(ROOT)}")

            async def ingest() -> IngestReport:
                async with AsyncProducer(settings, producer_name="demo") as producer:
                    return await ingest_file(SAMPLE, producer)

            report = asyncio.run(ingest())
            print(
                f"  published {report.published} turns (acknowledged by the broker), {report.rejected} rejected"
            )
            step("malformed records straight onto the turns topic")
            asyncio.run(publish_malformed(settings))
            letters = asyncio.run(wait_for_dead_letters(settings, len(MALFORMED)))
            for dl, label in zip(letters, MALFORMED, strict=False):
                print(f"  {label:20} -> dead letter: {dl.reason}: {dl.message[:70]}")
            step("what arrived on the turns topic")
            asyncio.run(show_arrivals(settings))
    print(f"\ndemo finished in {time.monotonic() - started:.1f}s")
    return 0 if len(letters) == len(MALFORMED) else 1


if __name__ == "__main__":
    raise SystemExit(main())
