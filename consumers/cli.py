"""The ``memstream`` command line."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from infra.settings import ConfigError, Settings, load


def _settings(args: argparse.Namespace) -> Settings:
    return load(getattr(args, "config", None))


def cmd_broker(args: argparse.Namespace) -> int:
    from infra.broker import EmbeddedBroker

    settings = _settings(args)
    broker = EmbeddedBroker(port=args.port).start()
    path = broker.record(settings.data_path)
    print(
        f"embedded broker listening on {broker.bootstrap} (memory storage; recorded in {path})",
        flush=True,
    )
    print(f"export MEMSTREAM_KAFKA_BOOTSTRAP={broker.bootstrap}", flush=True)
    if args.create_topics:
        from infra.topics import ensure_topics

        settings = settings.with_(kafka_bootstrap=broker.bootstrap)
        asyncio.run(ensure_topics(broker.bootstrap, settings.topic_prefix, settings.partitions))
        print("topics created", flush=True)
    stop = False

    def _stop(*_a: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        while not stop and broker.process is not None and broker.process.poll() is None:
            time.sleep(0.2)
    finally:
        broker.stop()
        path.unlink(missing_ok=True)
    return 0


def cmd_topics(args: argparse.Namespace) -> int:
    from infra.topics import ensure_topics
    from schemas.topics import TOPICS

    settings = _settings(args)
    if args.action == "list":
        for spec in TOPICS:
            types = ", ".join(spec.event_types) or "(dead letters)"
            print(f"{spec.name(settings.topic_prefix):28} key={spec.key:15} {types}")
        return 0
    statuses = asyncio.run(
        ensure_topics(settings.bootstrap(), settings.topic_prefix, settings.partitions)
    )
    for s in statuses:
        state = "created" if s.created else "exists"
        print(
            f"{s.name:28} {s.partitions:3} partitions  {state}{'  WARNING: ' + s.note if s.note else ''}"
        )
    return 0


def cmd_schemas(args: argparse.Namespace) -> int:
    from schemas.jsonschema import export

    for path in export(Path(args.out)):
        print(path)
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from consumers.ingest import ingest_file
    from consumers.producer import AsyncProducer
    from consumers.progress import Progress

    settings = _settings(args)
    path = Path(args.file)
    if not path.exists():
        print(f"memstream ingest: no such file: {path}", file=sys.stderr)
        return 2
    progress = Progress(
        "ingest",
        path.stat().st_size,
        enabled=None if args.progress == "auto" else args.progress == "on",
    )
    rejects_out = open(args.rejects, "w") if args.rejects else None  # noqa: SIM115

    def on_reject(line_no: int, reason: str) -> None:
        line = f"line {line_no}: {reason}"
        print(f"\r{line}\x1b[K" if progress.enabled else line, file=sys.stderr)
        if rejects_out:
            rejects_out.write(line + "\n")

    def on_progress(done: int, report: Any) -> None:
        progress.advance(
            done - progress.count, extra=f"published={report.published} rejected={report.rejected}"
        )

    async def run() -> Any:
        async with AsyncProducer(settings, producer_name="memstream-ingest") as producer:
            return await ingest_file(
                path, producer, window=args.window, on_progress=on_progress, on_reject=on_reject
            )

    try:
        report = asyncio.run(run())
    finally:
        if rejects_out:
            rejects_out.close()
    progress.close()
    rate = report.published / report.seconds if report.seconds else 0.0
    print(
        f"ingested {report.published} turns from {path} in {report.seconds:.2f}s ({rate:,.0f}/s); "
        f"{report.rejected} line(s) rejected"
    )
    return 0 if report.rejected == 0 else 1


def cmd_worker(args: argparse.Namespace) -> int:
    from streams.worker import run_worker

    run_worker(
        _settings(args), web_port=args.web_port, datadir=args.datadir, loglevel=args.loglevel
    )
    return 0


def cmd_dlq(args: argparse.Namespace) -> int:
    from consumers.kafka_read import read_topic
    from schemas.topics import BY_ROLE
    from streams.deadletter import decode_dead_letter

    settings = _settings(args)
    topic = BY_ROLE["dlq"].name(settings.topic_prefix)

    async def run() -> int:
        n = 0
        reasons: Counter[str] = Counter()
        async for record in read_topic(settings.bootstrap(), topic):
            dl = decode_dead_letter(record.value)
            reasons[dl.reason] += 1
            n += 1
            if n <= args.limit:
                print(
                    f"{dl.failed_at:%Y-%m-%d %H:%M:%S} {dl.source_topic}[{dl.partition}]@{dl.offset} "
                    f"{dl.agent}: {dl.reason} {dl.path} {dl.message[:120]}\n    original: {dl.original_text[:160]!r}"
                )
        print(f"{n} dead letter(s): " + ", ".join(f"{r}={c}" for r, c in reasons.most_common()))
        return 0

    return asyncio.run(run())


def cmd_tail(args: argparse.Namespace) -> int:
    from consumers.kafka_read import read_topic
    from schemas.envelope import decode
    from schemas.errors import EventValidationError
    from schemas.topics import BY_ROLE

    settings = _settings(args)
    topic = BY_ROLE[args.role].name(settings.topic_prefix)

    async def run() -> int:
        n = 0
        async for record in read_topic(settings.bootstrap(), topic):
            n += 1
            if n > args.limit:
                continue
            try:
                env = decode(record.value, limits=settings.limits)
                print(
                    f"{record.partition}@{record.offset} {env.occurred_at:%Y-%m-%d %H:%M} {env.namespace} {env.type} {env.payload}"
                )
            except EventValidationError as e:
                print(f"{record.partition}@{record.offset} INVALID {e}")
        print(f"{n} record(s) on {topic}")
        return 0

    return asyncio.run(run())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memstream", description=__doc__)
    parser.add_argument(
        "--config", help="TOML config file (default: $MEMSTREAM_CONFIG or ./memstream.toml)"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "broker", help="run the embedded Kafka-protocol broker on a free loopback port"
    )
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--create-topics", action="store_true", help="also create memstream's topics")
    p.set_defaults(fn=cmd_broker)

    p = sub.add_parser("topics", help="create (idempotent) or list the topics")
    p.add_argument("action", choices=["create", "list"])
    p.set_defaults(fn=cmd_topics)

    p = sub.add_parser("schemas", help="export JSON Schema for every event type")
    p.add_argument("action", choices=["export"])
    p.add_argument("--out", default="schemas/json")
    p.set_defaults(fn=cmd_schemas)

    p = sub.add_parser("ingest", help="publish conversation turns from a JSONL file")
    p.add_argument("file")
    p.add_argument("--window", type=int, default=5000, help="publishes in flight at most")
    p.add_argument("--progress", choices=["auto", "on", "off"], default="auto")
    p.add_argument("--rejects", help="also write rejected line numbers and reasons to this file")
    p.set_defaults(fn=cmd_ingest)

    p = sub.add_parser("worker", help="run a stream worker (creates topics first)")
    p.add_argument("--web-port", type=int, default=None)
    p.add_argument("--datadir", default=None)
    p.add_argument("--loglevel", default="warning")
    p.set_defaults(fn=cmd_worker)

    p = sub.add_parser("dlq", help="show dead letters with their reasons")
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(fn=cmd_dlq)

    p = sub.add_parser("tail", help="print the events on a topic")
    p.add_argument(
        "role",
        choices=[
            "turns",
            "access",
            "feedback",
            "workflows",
            "memory_log",
            "recall_requests",
            "recall_replies",
        ],
    )
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(fn=cmd_tail)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args))
    except ConfigError as e:
        print(f"memstream: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
