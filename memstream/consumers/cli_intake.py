"""``memstream`` commands that run the pipeline and feed it: broker, topics, schemas, ingest,
worker, dead letters, tail."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from memstream.consumers.cli_common import (
    _api_key,
    _settings,
)
from memstream.infra.kafka_auth import client_options
from memstream.infra.settings import Settings
from memstream.schemas.errors import EventValidationError


def cmd_broker(args: argparse.Namespace) -> int:
    """Run the embedded broker until Ctrl-C or SIGTERM (exit 0), or until the broker process
    dies (exit 1, saying so); ``--stop`` stops the one recorded in the data directory."""
    from memstream.infra.broker import (
        BrokerError,
        EmbeddedBroker,
        is_broker,
        recorded_broker,
        stop_recorded,
    )

    settings = _settings(args)
    if args.stop:
        stopped = stop_recorded(settings.data_path)
        print(
            f"stopped the embedded broker (pids {', '.join(map(str, stopped))})"
            if stopped
            else f"no embedded broker running for {settings.data_dir} (record cleared)"
        )
        return 0
    recorded = recorded_broker(settings.data_path)
    if recorded is not None:
        pid = recorded.get("pid")
        if isinstance(pid, int) and is_broker(pid):
            print(
                f"memstream broker: an embedded broker already runs at {recorded.get('bootstrap')} "
                f"(pid {pid}); use it, or stop it with `memstream broker --stop`",
                file=sys.stderr,
            )
            return 2
        stop_recorded(settings.data_path)  # left by a broker that died: clean up its owner
    log_path = settings.data_path / "broker.log"
    settings.data_path.mkdir(parents=True, exist_ok=True)
    try:
        broker = EmbeddedBroker(port=args.port, log_path=log_path, die_with_parent=True).start()
    except BrokerError as e:
        print(f"memstream broker: {e} (log: {log_path})", file=sys.stderr)
        return 1
    path = broker.record(settings.data_path)
    print(
        f"embedded broker listening on {broker.bootstrap} (memory storage; recorded in {path})",
        flush=True,
    )
    print(f"export MEMSTREAM_KAFKA_BOOTSTRAP={broker.bootstrap}", flush=True)
    if args.create_topics:
        from memstream.infra.topics import ensure_topics

        settings = settings.with_(kafka_bootstrap=broker.bootstrap)
        asyncio.run(ensure_topics(broker.bootstrap, settings.topic_prefix, settings.partitions))
        print("topics created", flush=True)
    stop = False

    def _stop(*_a: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    code: int | None = None
    try:
        while not stop and broker.process is not None:
            code = broker.process.poll()
            if code is not None:
                break
            time.sleep(0.2)
    finally:
        broker.stop()
        path.unlink(missing_ok=True)
    if code is not None:
        print(
            f"memstream broker: the broker process exited with status {code}: every topic it "
            f"held is gone (memory storage; log: {log_path}). Start it again, then "
            "`memstream recover` (README: Recovery)",
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_topics(args: argparse.Namespace) -> int:
    from memstream.infra.topics import ensure_topics
    from memstream.schemas.topics import TOPICS

    settings = _settings(args)
    if args.action == "list":
        for spec in TOPICS:
            types = ", ".join(spec.event_types) or "(dead letters)"
            print(f"{spec.name(settings.topic_prefix):28} key={spec.key:15} {types}")
        return 0
    statuses = asyncio.run(
        ensure_topics(
            settings.bootstrap(),
            settings.topic_prefix,
            settings.partitions,
            auth=client_options(settings),
        )
    )
    for s in statuses:
        state = "created" if s.created else "exists"
        print(
            f"{s.name:28} {s.partitions:3} partitions  {state}{'  WARNING: ' + s.note if s.note else ''}"
        )
    return 0


def cmd_schemas(args: argparse.Namespace) -> int:
    from memstream.schemas.jsonschema import export

    for path in export(Path(args.out)):
        print(path)
    return 0


def _notes_as_jsonl(args: argparse.Namespace, path: Path) -> tuple[Path, list[int]] | int:
    """Markdown daily notes (core/notes.py) as an ingest file beside the data directory."""
    import tempfile
    from datetime import date

    import orjson

    from memstream.core.notes import NotesError, note_turns

    if not args.namespace:
        print("memstream ingest: markdown notes need --namespace NAME", file=sys.stderr)
        return 2
    try:
        day = date.fromisoformat(args.date) if args.date else None
        rows = note_turns(
            path.read_text(encoding="utf-8"),
            name=str(path),
            namespace=args.namespace,
            speaker=args.speaker,
            day=day,
        )
    except (NotesError, ValueError) as e:
        print(f"memstream ingest: {e}", file=sys.stderr)
        return 2
    out = Path(tempfile.mkstemp(prefix="notes-", suffix=".jsonl")[1])
    out.write_bytes(b"".join(orjson.dumps(row) + b"\n" for _, row in rows))
    print(f"{path}: {len(rows)} notes as turns of {args.namespace}", file=sys.stderr)
    return out, [line for line, _ in rows]


def cmd_ingest(args: argparse.Namespace) -> int:
    from memstream.consumers.ingest import BrokerUnavailable, ingest_file
    from memstream.consumers.producer import AsyncProducer, PublishError
    from memstream.consumers.progress import Progress

    settings = _settings(args)
    # the client logs every failed connection and request: a broker gone mid-file is said
    # once, by us (consumers/ingest.py)
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    path = Path(args.file)
    if not path.exists():
        print(f"memstream ingest: no such file: {path}", file=sys.stderr)
        return 2
    lines: list[int] | None = None  # markdown: the note's line for each converted line
    if path.suffix.lower() in (".md", ".markdown"):
        converted = _notes_as_jsonl(args, path)
        if isinstance(converted, int):
            return converted
        path, lines = converted
    shown = Path(args.file)
    progress = Progress(
        "ingest",
        path.stat().st_size,
        enabled=None if args.progress == "auto" else args.progress == "on",
    )
    rejects_out = open(args.rejects, "w") if args.rejects else None  # noqa: SIM115

    def on_reject(line_no: int, reason: str) -> None:
        if lines is not None:  # the line of the note in the markdown file
            line_no = lines[line_no - 1]
        line = f"line {line_no}: {reason}"
        print(f"\r{line}\x1b[K" if progress.enabled else line, file=sys.stderr)
        if rejects_out:
            rejects_out.write(line + "\n")

    def on_progress(done: int, report: Any) -> None:
        progress.advance(
            done - progress.count, extra=f"published={report.published} rejected={report.rejected}"
        )

    async def run() -> Any:
        timeout_ms = int(args.broker_timeout * 1000)
        async with AsyncProducer(
            settings,
            producer_name="memstream-ingest",
            request_timeout_ms=timeout_ms,
            delivery_timeout_ms=max(timeout_ms, 30_000),
        ) as producer:
            return await ingest_file(
                path, producer, window=args.window, on_progress=on_progress, on_reject=on_reject
            )

    try:
        report = asyncio.run(run())
    except BrokerUnavailable as e:  # one message, not one per line
        progress.close()
        print(f"memstream ingest: {e}", file=sys.stderr)
        return 4
    except PublishError as e:  # the broker cannot be reached at all
        progress.close()
        print(f"memstream ingest: {e}", file=sys.stderr)
        return 4
    finally:
        if rejects_out:
            rejects_out.close()
        if lines is not None:
            path.unlink(missing_ok=True)  # the notes converted to turns
    progress.close()
    rate = report.published / report.seconds if report.seconds else 0.0
    print(
        f"ingested {report.published} turns from {shown} in {report.seconds:.2f}s ({rate:,.0f}/s); "
        f"{report.rejected} line(s) rejected"
    )
    if report.unacknowledged:
        print(
            f"memstream ingest: the broker did not acknowledge {report.unacknowledged} turn(s), "
            f"the first at line {report.first_unacknowledged}: ingest the file again (turns "
            "stored already are recognised by their ids)",
            file=sys.stderr,
        )
        return 4
    if args.wait and report.published and not _wait_for_extraction(args, settings, report):
        return 3
    return 0 if report.rejected == 0 else 1


def _wait_for_extraction(args: argparse.Namespace, settings: Settings, report: Any) -> bool:
    """`ingest --wait`: block until the published turns are extracted and projected."""
    from memstream.consumers.ingest_wait import WaitError, wait_until_recallable
    from memstream.consumers.progress import Progress

    bar = Progress(
        "extracted",
        report.published,
        enabled=None if args.progress == "auto" else args.progress == "on",
    )
    try:
        done = wait_until_recallable(
            settings,
            report.published_ids,
            timeout=args.wait_timeout,
            api_key=_api_key(settings),
            on_progress=lambda n, _total: bar.advance(n - bar.count),
        )
    except WaitError as e:
        bar.close()
        print(f"memstream ingest: {e}", file=sys.stderr)
        return False
    bar.close()
    if not done.done:
        behind = [kind for kind, ok in done.projections.items() if not ok]
        print(
            f"memstream ingest: not done after {args.wait_timeout:g}s: {done.extracted} of "
            f"{done.turns} turns extracted"
            + (f"; projections behind: {', '.join(behind)}" if behind else ""),
            file=sys.stderr,
        )
        return False
    print(
        f"extracted and projected all {done.turns} turns {done.seconds:.1f}s after publishing; "
        "they are recallable now"
    )
    return True


def cmd_worker(args: argparse.Namespace) -> int:
    from memstream.core.roles import RoleError
    from memstream.streams.supervise import SUPERVISED_ENV, child_command, supervise
    from memstream.streams.worker import node_plan, run_worker

    settings = _settings(args)
    try:
        node_plan(settings, args.role)
    except RoleError as e:
        print(f"memstream worker: {e}", file=sys.stderr)
        return 2
    if args.restarts < 0:
        print("memstream worker: --restarts must be 0 or more", file=sys.stderr)
        return 2
    if args.restarts and not os.environ.get(SUPERVISED_ENV):
        return supervise(child_command(args.argv), args.restarts)
    run_worker(
        settings,
        web_port=args.web_port,
        # one setting places everything: faust's own directory lives under the data directory
        datadir=args.datadir or str(Path(settings.data_dir) / "worker"),
        loglevel=args.loglevel,
        roles=args.role,
    )
    return 0


def cmd_dlq(args: argparse.Namespace) -> int:
    from memstream.consumers.kafka_read import read_topic
    from memstream.schemas.topics import BY_ROLE
    from memstream.streams.deadletter import decode_dead_letter

    settings = _settings(args)
    topic = BY_ROLE["dlq"].name(settings.topic_prefix)

    async def run() -> int:
        n = 0
        reasons: Counter[str] = Counter()
        async for record in read_topic(settings.bootstrap(), topic, auth=client_options(settings)):
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
    from memstream.consumers.kafka_read import read_topic
    from memstream.schemas.envelope import decode
    from memstream.schemas.topics import BY_ROLE

    settings = _settings(args)
    topic = BY_ROLE[args.role].name(settings.topic_prefix)

    async def run() -> int:
        import heapq

        n = 0
        # like tail(1): the newest records by broker timestamp, across partitions
        newest: list[tuple[int, int, int, Any]] = []
        async for record in read_topic(settings.bootstrap(), topic, auth=client_options(settings)):
            n += 1
            heapq.heappush(newest, (record.timestamp, record.partition, record.offset, record))
            if len(newest) > max(0, args.limit):
                heapq.heappop(newest)
        latest = [item[3] for item in sorted(newest, key=lambda item: item[:3])]
        for record in latest:
            try:
                env = decode(record.value, limits=settings.limits)
                print(
                    f"{record.partition}@{record.offset} {env.occurred_at:%Y-%m-%d %H:%M} {env.namespace} {env.type} {env.payload}"
                )
            except EventValidationError as e:
                print(f"{record.partition}@{record.offset} INVALID {e}")
        shown = f", the latest {len(latest)} shown" if len(latest) < n else ""
        print(f"{n} record(s) on {topic}{shown}")
        return 0

    return asyncio.run(run())
