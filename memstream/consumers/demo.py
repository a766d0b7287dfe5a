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
from typing import Any

from aiokafka import AIOKafkaProducer

from memstream.consumers.client import Memory
from memstream.consumers.ingest import IngestReport, ingest_file
from memstream.consumers.kafka_read import read_topic
from memstream.consumers.producer import AsyncProducer
from memstream.infra.broker import EmbeddedBroker
from memstream.infra.settings import Settings, load
from memstream.infra.topics import ensure_topics
from memstream.schemas.envelope import decode
from memstream.schemas.topics import BY_ROLE
from memstream.streams.deadletter import DeadLetter, decode_dead_letter
from memstream.streams.status import wait_until_ready

ROOT = Path(__file__).resolve().parents[2]
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
        MEMSTREAM_DATA_DIR=settings.data_dir,
        MEMSTREAM_BUFFER_IDLE_SECONDS=str(settings.buffer_idle_seconds),
        PYTHONPATH=str(ROOT),
    )
    log = datadir / "worker.log"
    started = time.time()
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memstream.consumers.cli", "worker", "--datadir", str(datadir)],
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


def wait_until(fn: Any, ok: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def show_recall(mem: Memory, namespace: str, question: str) -> dict[str, Any]:
    result = mem.recall(question, namespace=namespace, k=3)
    print(f"  Q: {question}   [{result['intent']}, confidence {result['confidence']}]")
    for r in result["results"]:
        ex = r["explain"]
        why = ", ".join(
            f"{n}={ex[n]:.2f}"
            for n in ("relevance", "retention", "q_value", "importance")
            if n in ex
        )
        print(
            f"     {r['score']:.3f}  {r['text']}   ({why}; from turns {', '.join(r['source_turn_ids'])})"
        )
    return result


def analytics(mem_settings: Settings, sql: str) -> list[tuple[Any, ...]]:
    from memstream.consumers.analytics import open_analytics

    db = open_analytics(mem_settings)
    try:
        return db.sql(sql)[1]
    finally:
        db.close()


def main() -> int:
    started = time.monotonic()
    base = load()
    workdir = Path(tempfile.mkdtemp(prefix="memstream-demo-"))
    ok = True
    with broker_for(base.with_(data_dir=str(workdir), buffer_idle_seconds=1.0)) as settings:
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
            ok &= len(letters) == len(MALFORMED)
            step("what arrived on the turns topic")
            asyncio.run(show_arrivals(settings))

            step("memories (extracted by the write path, projected into DuckDB and Qdrant)")
            with Memory(settings=settings) as mem:
                memories = wait_until(
                    lambda: mem.get_all(namespace="acme")["results"], lambda rs: len(rs) >= 10
                )
                wait_until(lambda: mem.recall("Kafka version", namespace="acme")["results"], bool)
                for row in analytics(
                    settings,
                    "SELECT namespace, status, count(*) FROM memories GROUP BY ALL ORDER BY ALL",
                ):
                    print(f"  {row[0]:8} {row[1]:10} {row[2]}")
                print(f"  e.g. {memories[0]['memory']!r} ({memories[0]['category']})")
                superseded = [
                    m
                    for m in mem.get_all(namespace="acme", filters={"status": "superseded"})[
                        "results"
                    ]
                ]
                for m in superseded:
                    print(f"  superseded: {m['memory']!r} -> {m['superseded_by']}")

                step("recall with explanations")
                first = show_recall(mem, "acme", "Which Kafka version do we run?")
                show_recall(mem, "acme", "What does Maya prefer for stream jobs?")
                show_recall(mem, "globex", "When is the Android release?")
                ok &= bool(first["results"]) and "3.7" in first["results"][0]["text"]

                step("feedback moves Q-values")
                top = first["results"][0]["memory_id"]
                before = mem.get(top, namespace="acme")["q_value"]
                mem.feedback(first["query_id"], "positive", namespace="acme", is_query=True)
                after = wait_until(
                    lambda: mem.get(top, namespace="acme")["q_value"], lambda q: q > before
                )
                print(
                    f"  positive feedback on {first['query_id']}: Q {before:.3f} -> {after:.3f}  ({top})"
                )
                ok &= after > before
                weak = show_recall(mem, "acme", "Who owns the Qdrant cluster?")
                if weak["results"]:
                    mem.feedback(weak["results"][0]["memory_id"], "negative", namespace="acme")

                step("workflow observations and gap signals")
                for outcome in ["success", "failure", "corrected", "failure", "success"]:
                    mem.observe(
                        "deploy-review", outcome, namespace="acme", detail=f"review run: {outcome}"
                    )
                for outcome in ["success"] * 4:
                    mem.observe("recall", outcome, namespace="acme")
                for question in [
                    "how do we rotate kafka keys",
                    "kafka key rotation procedure",
                    "rotating the kafka keys safely",
                ]:
                    mem.recall(question, namespace="acme", k=3)
                wait_until(
                    lambda: analytics(settings, "SELECT count(*) FROM workflows")[0][0],
                    lambda n: n >= 9,
                )
                wait_until(
                    lambda: analytics(settings, "SELECT count(*) FROM searches")[0][0],
                    lambda n: n >= 8,
                )

            step('gap report (memstream sql "SELECT * FROM gap_report")')
            for row in analytics(
                settings,
                "SELECT namespace, topic, searches, avg_top_score, suggestion FROM gap_report",
            ):
                print(
                    f"  {row[0]} '{row[1]}': {row[2]} searches, avg top score {row[3]}\n    {row[4]}"
                )
            step("workflow health")
            for row in analytics(
                settings,
                "SELECT namespace, workflow, success_7d, failure_7d, corrected_7d, status "
                "FROM workflow_health ORDER BY namespace, workflow",
            ):
                # one row per (namespace, workflow): name both, or the rows look doubled
                print(
                    f"  {row[0]:10} {row[1]:14} success {row[2]}  failure {row[3]}  "
                    f"corrected {row[4]}  -> {row[5]}"
                )
            step("Q-values now")
            for row in analytics(
                settings,
                "SELECT text, round(q_value, 3) FROM memories WHERE namespace = 'acme' "
                "AND q_value <> 0.5 ORDER BY q_value DESC",
            ):
                print(f"  {row[1]:.3f}  {row[0]}")
    print(f"\ndemo finished in {time.monotonic() - started:.1f}s: {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
