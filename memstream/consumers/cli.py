"""The ``memstream`` command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from memstream.consumers.worker_api import auth_headers, refusal
from memstream.infra.kafka_auth import client_options
from memstream.infra.settings import ConfigError, Settings, load
from memstream.schemas.errors import EventValidationError


def _settings(args: argparse.Namespace) -> Settings:
    settings = load(getattr(args, "config", None))
    key = getattr(args, "api_key", None)  # --api-key wins over MEMSTREAM_API_KEY
    return settings.with_(api_key=key) if key else settings


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


def _api_key(settings: Settings) -> str | None:
    """The key the CLI sends: its own (see consumers/worker_api.py), never the server's list."""
    return settings.api_key


def cmd_worker(args: argparse.Namespace) -> int:
    from memstream.streams.worker import run_worker

    settings = _settings(args)
    run_worker(
        settings,
        web_port=args.web_port,
        # one setting places everything: faust's own directory lives under the data directory
        datadir=args.datadir or str(Path(settings.data_dir) / "worker"),
        loglevel=args.loglevel,
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
    from memstream.schemas.errors import EventValidationError
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


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


def _print_table(columns: list[str], rows: list[tuple[Any, ...]], out: TextIO) -> None:
    cells = [[("" if v is None else str(v)) for v in r] for r in rows]
    widths = [min(60, max([len(c), *(len(r[i]) for r in cells)])) for i, c in enumerate(columns)]
    out.write("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip() + "\n")
    out.write("  ".join("-" * w for w in widths) + "\n")
    for r in cells:
        out.write("  ".join(v[:w].ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() + "\n")
    out.write(f"({len(rows)} row{'s' if len(rows) != 1 else ''})\n")


def cmd_sql(args: argparse.Namespace) -> int:
    from memstream.consumers.analytics import open_analytics
    from memstream.consumers.output import write_rows
    from memstream.projections.user_sql import UserSQLError

    settings = _settings(args)
    try:
        analytics = open_analytics(settings, timeout=settings.sql_timeout_seconds)
    except FileNotFoundError as e:
        print(f"memstream sql: {e}", file=sys.stderr)
        return 2
    try:
        # one row more than asked for tells whether the limit cut the result
        columns, rows = analytics.sql(args.query, limit=args.limit + 1)
    except UserSQLError as e:
        print(f"memstream sql: {e}", file=sys.stderr)
        return 2
    finally:
        analytics.close()
    if len(rows) > args.limit:
        rows = rows[: args.limit]
        print(
            f"memstream sql: the result was cut at {args.limit} rows (--limit N shows more)",
            file=sys.stderr,
        )
    if args.format == "table":
        _print_table(columns, rows, sys.stdout)
    else:
        write_rows(columns, rows, args.format, args.out)
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from memstream.consumers.progress import Progress
    from memstream.projections.factory import ALL
    from memstream.projections.layout import Layout
    from memstream.projections.rebuild import rebuild
    from memstream.streams.status import running_worker

    settings = _settings(args)
    layout = Layout(settings.data_path)
    kinds = [k for k in ALL if k != "archive"] if args.projection == "all" else [args.projection]
    until = _parse_time(args.until) if args.until else None
    if until is None and not args.no_switch and running_worker(settings.data_dir):
        # switching under a running worker left it writing to the old copy while readers
        # moved to the new one, which nothing kept current once the worker stopped
        print(
            "memstream replay: a worker is running on this data directory; stop it first, "
            "or rebuild side by side with --no-switch (or `memstream verify`)",
            file=sys.stderr,
        )
        return 2
    for kind in kinds:
        version = layout.next_version(kind)
        progress = Progress(
            f"replay {kind}", enabled=None if args.progress == "auto" else args.progress == "on"
        )
        started = time.monotonic()
        projection = asyncio.run(
            rebuild(
                kind,
                settings,
                version,
                from_archive=args.from_archive,
                until=until,
                on_batch=progress.advance,
            )
        )
        projection.close()
        progress.close()
        elapsed = time.monotonic() - started
        where = layout.duckdb(version) if kind == "duckdb" else layout.qdrant(version)
        print(f"{kind}: rebuilt {progress.count:,} records into {where} in {elapsed:.1f}s")
        if until is None and not args.no_switch:
            layout.switch(kind, version)
            print(f"{kind}: CURRENT -> {version}")
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    """After the broker lost the log: restore it from the archive, rebuild the read models,
    record the log's identity (projections/recover.py; README: Recovery)."""
    from memstream.projections.recover import recover
    from memstream.streams.status import running_worker

    settings = _settings(args)
    logging.getLogger("aiokafka").setLevel(logging.WARNING)
    if running_worker(settings.data_dir):
        print(
            "memstream recover: a worker is running on this data directory; stop it first",
            file=sys.stderr,
        )
        return 2
    try:
        report = asyncio.run(recover(settings, say=lambda line: print(line, flush=True)))
    except ConnectionError as e:
        print(f"memstream recover: {e}", file=sys.stderr)
        return 1
    if not report.diagnosis.lost:
        print(
            f"the log at {settings.bootstrap()} is the one {settings.data_dir} was built from "
            "(no read position past its end): nothing to recover"
        )
        return 0
    restored = sum(report.restored.values())
    for topic, n in sorted(report.restored.items()):
        print(f"{topic}: {n:,} records restored from the archive")
    if report.already:
        print(f"{sum(report.already.values()):,} archived records were on the log already")
    for line in report.unreadable:  # a dead letter may now be there twice: said, not hidden
        print(f"warning: {line}; its archived records were published again", file=sys.stderr)
    for line in report.failed[:20]:
        print(f"memstream recover: not restored: {line}", file=sys.stderr)
    if report.failed:
        print(
            f"memstream recover: the broker refused {len(report.failed):,} archived records "
            "after retries; the archive keeps them: run memstream recover again",
            file=sys.stderr,
        )
        return 1
    print(
        f"offsets: {'as before' if report.offsets_kept else 'moved (the log had records)'}; "
        f"archive: {report.archive}"
    )
    print(
        f"recovered in {report.seconds:.1f}s: log epoch {report.diagnosis.epoch} recorded; "
        "start the worker (the agents re-read the restored inputs and skip what was extracted)"
    )
    if not restored:
        print(
            "memstream recover: the archive held nothing to restore: what the lost log held "
            "is gone; the read models now follow the log as it is",
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from memstream.consumers.analytics import RemoteAnalytics
    from memstream.projections import factory
    from memstream.projections.duckdb_projection import Digest, DuckDBProjection
    from memstream.projections.qdrant_projection import QdrantProjection
    from memstream.projections.rebuild import verify
    from memstream.streams.status import running_worker

    settings = _settings(args)
    worker = running_worker(settings.data_dir)
    if worker is not None:
        remote = RemoteAnalytics(worker["api_url"], timeout=300, api_key=_api_key(settings))
        live = remote.get("/projections/digest")
        duck = live.get("duckdb")
        duck_digest = (
            Digest({(t, p): o for t, p, o in duck["positions"]}, duck["tables"]) if duck else None
        )

        def qdrant_digest(namespaces: list[str]) -> dict[str, str]:
            return dict(
                remote.get("/projections/digest", namespaces=",".join(namespaces)).get("qdrant")
                or {}
            )

        report = asyncio.run(
            verify(settings, duck_digest, qdrant_digest if "qdrant" in live else None)
        )
        remote.close()
    else:
        duck_live = factory.build("duckdb", settings)
        q_live = factory.build("qdrant", settings)
        assert isinstance(duck_live, DuckDBProjection) and isinstance(q_live, QdrantProjection)
        try:
            report = asyncio.run(verify(settings, duck_live.digest(), q_live.digest))
        finally:
            duck_live.close()
            q_live.close()
    for name, count in report.counts.items():
        print(f"{name}: {count:,}")
    for kind, diffs in report.differences.items():
        print(f"{kind}: {'identical' if not diffs else f'{len(diffs)} difference(s)'}")
        for d in diffs:
            print(f"  {d}")
    return 0 if report.identical else 1


def cmd_audit(args: argparse.Namespace) -> int:
    import orjson

    from memstream.consumers.analytics import open_analytics
    from memstream.projections.audit import as_of, audit_memory

    settings = _settings(args)
    analytics = open_analytics(settings)
    try:
        if args.as_of:
            if not args.namespace:
                print("memstream audit: --as-of needs --namespace", file=sys.stderr)
                return 2
            when = _parse_time(args.as_of)
            states = as_of(analytics, args.namespace, when)
            if args.json:
                from memstream.core.memory_state import to_json

                print(
                    orjson.dumps([to_json(s) for s in states], option=orjson.OPT_INDENT_2).decode()
                )
            else:
                print(f"{args.namespace} as of {when.isoformat()}: {len(states)} memories")
                for s in states:
                    print(
                        f"  [{s.category}] {s.text}  (q={s.q_value:.2f}, tier={s.tier}, id={s.memory_id})"
                    )
            return 0
        if not args.memory_id:
            print(
                "memstream audit: give a MEMORY_ID, or --namespace N --as-of TIME", file=sys.stderr
            )
            return 2
        trail = audit_memory(analytics, args.memory_id, args.namespace)
    finally:
        analytics.close()
    if not trail.steps:
        print(f"memstream audit: no events for memory {args.memory_id}", file=sys.stderr)
        return 1
    if args.json:
        print(orjson.dumps(trail.as_dict(), default=str, option=orjson.OPT_INDENT_2).decode())
    else:
        print(f"memory {trail.memory_id} in {trail.namespace}")
        for step in trail.steps:
            print(f"  {step.at[:19]}  {step.kind:14} {step.summary}")
    return 0


def _recaller(settings: Settings) -> Any:
    """A function (namespace, query, k, as_of) -> result dict: through the running worker, or
    straight from the retrieval store when no worker holds it."""
    import httpx

    from memstream.streams.status import running_worker

    worker = running_worker(settings.data_dir)
    if worker is not None:
        client = httpx.Client(base_url=worker["api_url"], timeout=60)
        key = _api_key(settings)
        headers = auth_headers(key)

        def remote(
            namespace: str, query: str, k: int, as_of: str | None, query_id: str | None
        ) -> Any:
            response = client.post(
                "/v1/recall",
                headers=headers,
                json={
                    "namespace": namespace,
                    "query": query,
                    "k": k,
                    "as_of": as_of,
                    "query_id": query_id,
                },
            )
            if (refused := refusal(response, key)) is not None:
                raise refused  # the whole batch would fail alike: stop with one line
            body = response.json()
            if response.status_code != 200:
                error = body.get("error", {})
                raise EventValidationError(
                    str(error.get("code", response.status_code)),
                    str(error.get("message", response.text)),
                    str(error.get("path") or ""),
                )
            return body

        return remote
    from memstream.consumers.recall import RecallService
    from memstream.core.sparse import BM25Encoder
    from memstream.projections.factory import embedder, retrieval_store

    service = RecallService(retrieval_store(settings), embedder(settings), BM25Encoder())

    def local(namespace: str, query: str, k: int, as_of: str | None, query_id: str | None) -> Any:
        from memstream.schemas.envelope import make_event
        from memstream.schemas.events import RecallRequested

        when = _parse_time(as_of) if as_of else None
        # the same checks as a request to the worker's API (k, ids, text limits)
        make_event(
            RecallRequested(query_id=query_id or "unset", query=query, k=k, as_of=when),
            namespace=namespace,
            limits=settings.limits,
        )
        return service.recall_sync(namespace, query, k=k, as_of=when, query_id=query_id).as_dict()

    return local


def _recall_batch(args: argparse.Namespace, recall: Any) -> int:
    """One answer line per query line; a bad line gives an error object naming the line,
    the field and the rule, and the batch goes on (exit 1 when any line failed)."""
    import orjson

    failed = 0
    with open(args.batch, "rb") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            q: Any = None
            try:
                q = orjson.loads(line)
                if not isinstance(q, dict):
                    raise EventValidationError("wrong_type", "expected a JSON object", "")
                for name in ("namespace", "query"):
                    if not isinstance(q.get(name), str):
                        raise EventValidationError("missing_field", "a string is required", name)
                result = recall(
                    q["namespace"],
                    q["query"],
                    int(args.k if q.get("k") is None else q["k"]),
                    q.get("as_of"),
                    q.get("id"),
                )
            except (orjson.JSONDecodeError, EventValidationError, TypeError, ValueError) as e:
                failed += 1
                error = {
                    "line": number,
                    "code": getattr(e, "code", type(e).__name__),
                    "field": getattr(e, "path", "") or None,
                    "message": getattr(e, "message", str(e)),
                }
                ident = q.get("id") if isinstance(q, dict) else None
                sys.stdout.write(orjson.dumps({"id": ident, "error": error}).decode() + "\n")
                where = f" field {error['field']}" if error["field"] else ""
                print(f"line {number}{where}: {error['message']}", file=sys.stderr)
                continue
            out = {
                "id": q.get("id"),
                "query_id": result["query_id"],
                "namespace": q["namespace"],
                "query": q["query"],
                "confidence": result["confidence"],
                "results": [
                    {k: r[k] for k in ("memory_id", "text", "score", "explain", "source_turn_ids")}
                    for r in result["results"]
                ],
            }
            sys.stdout.write(orjson.dumps(out).decode() + "\n")
    if failed:
        print(f"memstream recall: {failed} line(s) failed", file=sys.stderr)
    return 1 if failed else 0


def cmd_recall(args: argparse.Namespace) -> int:
    import orjson

    settings = _settings(args)
    recall = _recaller(settings)
    if args.batch:
        return _recall_batch(args, recall)
    if not args.query or not args.namespace:
        print(
            "memstream recall: give a question and --namespace (or --batch FILE)", file=sys.stderr
        )
        return 2
    try:
        result = recall(args.namespace, args.query, args.k, args.as_of, None)
    except EventValidationError as e:
        print(f"memstream recall: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return 0
    print(f"{result['query_id']}  intent={result['intent']}  confidence={result['confidence']}")
    scores = [r["score"] for r in result["results"]]
    if scores != sorted(scores, reverse=True):
        # MMR picks the order (relevance against repeating what is already listed), so a
        # lower score can rank higher; say so rather than show an order that looks wrong
        print("    (ranked for relevance and diversity: a score is the memory's own, before")
        print("     the diversity step, so a lower one may rank above a higher one)")
    for i, r in enumerate(result["results"], start=1):
        ex = r["explain"]
        parts = ", ".join(
            f"{name} {ex[name]:.2f}"
            for name in ("relevance", "retention", "q_value", "importance")
            if name in ex
        )
        print(
            f"{i:2}. {r['score']:.3f}  {r['text']}\n      ({parts}; turns {', '.join(r['source_turn_ids'])})"
        )
    return 0


def _worker_admin(
    args: argparse.Namespace, command: str, payload: dict[str, Any], why: str = ""
) -> dict[str, Any] | int:
    """POST an admin call to the running worker's /v1/<command>: its JSON body, or an exit
    code after printing what went wrong."""
    import httpx

    from memstream.streams.status import running_worker

    settings = _settings(args)
    worker = running_worker(settings.data_dir)
    if worker is None:
        print(f"memstream {command}: no running worker{why}", file=sys.stderr)
        return 2
    key = _api_key(settings)
    response = httpx.post(
        f"{worker['api_url']}/v1/{command}", timeout=600, headers=auth_headers(key), json=payload
    )
    if (refused := refusal(response, key)) is not None:
        raise refused
    body: dict[str, Any] = response.json()
    if response.status_code != 200:
        print(f"memstream {command}: {body.get('error', {}).get('message')}", file=sys.stderr)
        return 1
    return body


def cmd_consolidate(args: argparse.Namespace) -> int:
    import orjson

    body = _worker_admin(
        args,
        "consolidate",
        {"apply": args.apply, "namespaces": args.namespace or [], "at": args.at},
        " (the cycle runs where the memory state lives)",
    )
    if isinstance(body, int):
        return body
    if args.json:
        print(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
        return 0
    mode = "applied" if args.apply else "dry run (nothing written; --apply to act)"
    for r in body["reports"]:
        print(
            f"{r['namespace']} at {r['at'][:19]}: {r['memories']} memories, {len(r['actions'])} actions, {mode}"
        )
        for step, n in r["counts"].items():
            deferred = r["deferred"].get(step, 0)
            print(f"  {step:14} {n:5}" + (f"  (+{deferred} deferred)" if deferred else ""))
    return 0


def _worker_client(args: argparse.Namespace, command: str) -> Any:
    """An httpx client for the running worker's API, or an exit code after saying why."""
    import httpx

    from memstream.streams.status import running_worker

    settings = _settings(args)
    worker = running_worker(settings.data_dir)
    if worker is None:
        print(f"memstream {command}: no running worker (start `memstream worker`)", file=sys.stderr)
        return 2
    key = _api_key(settings)
    # a refused key is one line for every command (see main), whatever the route
    return httpx.Client(
        base_url=worker["api_url"],
        timeout=60,
        headers=auth_headers(key),
        event_hooks={"response": [lambda r: _refused(r, key)]},
    )


def _refused(response: Any, key: str | None) -> None:
    if response.status_code in (401, 403):
        response.read()  # a hook sees the response before its body is read
    if (refused := refusal(response, key)) is not None:
        raise refused


def cmd_pin(args: argparse.Namespace) -> int:
    """memstream pin|unpin|lock MEMORY_ID --namespace N: an edit event, like the SDK's."""
    client = _worker_client(args, args.command)
    if isinstance(client, int):
        return client
    with client:
        response = client.post(
            f"/v1/memories/{args.memory_id}/{args.command}",
            json={"namespace": args.namespace, "reason": args.reason},
        )
    body = response.json()
    if response.status_code != 200:
        error = body.get("error", {})
        print(f"memstream {args.command}: {error.get('message', response.text)}", file=sys.stderr)
        return 1
    print(f"{args.command} of {args.memory_id} queued (event {body['event_id']})")
    return 0


def cmd_entity(args: argparse.Namespace) -> int:
    """memstream entity [NAME] --namespace N: the entity list, or one entity's timeline."""
    import orjson

    client = _worker_client(args, "entity")
    if isinstance(client, int):
        return client
    path = f"/v1/entities/{args.name}" if args.name else "/v1/entities"
    with client:
        response = client.get(path, params={"namespace": args.namespace})
    body = response.json()
    if response.status_code != 200:
        error = body.get("error", {})
        print(f"memstream entity: {error.get('message', response.text)}", file=sys.stderr)
        return 1
    if args.json:
        print(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
    elif not args.name:
        for e in body["entities"]:
            also = f"  (also {', '.join(e['aliases'])})" if e["aliases"] else ""
            print(f"{e['memories']:5}  {e['name']}{also}")
    else:
        also = f" (also {', '.join(body['aliases'])})" if body["aliases"] else ""
        print(f"{body['name']}{also}: {len(body['timeline'])} memories")
        for m in body["timeline"]:
            status = "" if m["status"] == "active" else f"  [{m['status']}]"
            print(f"  {(m['at'] or '')[:10]}  {m['text']}{status}")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    """memstream graph MEMORY_ID --namespace N [--hops 2] [--format text|json|dot]."""
    import orjson

    client = _worker_client(args, "graph")
    if isinstance(client, int):
        return client
    params = {"namespace": args.namespace, "hops": str(args.hops)}
    if args.relation:
        params["relation"] = args.relation
    if args.as_of:
        params["as_of"] = args.as_of
    if args.format == "dot":
        params["format"] = "dot"
    with client:
        response = client.get(f"/v1/graph/{args.memory_id}", params=params)
    if response.status_code != 200:
        error = response.json().get("error", {})
        where = f" ({error['path']})" if error.get("path") else ""
        print(f"memstream graph: {error.get('message', response.text)}{where}", file=sys.stderr)
        return 1
    if args.format == "dot":
        sys.stdout.write(response.text)
        return 0
    body = response.json()
    if args.format == "json":
        print(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
        return 0
    texts = {n["memory_id"]: n.get("text") or "(unknown)" for n in body["nodes"]}
    print(
        f"{args.memory_id}: {len(body['nodes']) - 1} memories within {body['hops']} hops, "
        f"{len(body['edges'])} edges"
    )
    for n in body["nodes"]:
        status = "" if n.get("status") in (None, "active") else f"  [{n['status']}]"
        print(f"  [{n['depth']}] {n['memory_id']}  {texts[n['memory_id']]}{status}")
    for e in body["edges"]:
        print(
            f"  {texts.get(e['source_id'], e['source_id'])[:50]!r} -{e['relation']} "
            f"{float(e['confidence']):.2f}-> {texts.get(e['target_id'], e['target_id'])[:50]!r} "
            f"({e['rule']})"
        )
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    """memstream tree show|add|remove|prune --namespace N: the category tree, and the user's
    node events (through the worker's API, with the CLI's key)."""
    import orjson

    client = _worker_client(args, "tree")
    if isinstance(client, int):
        return client
    with client:
        if args.tree_command in ("add", "remove"):
            body: dict[str, Any] = {"namespace": args.namespace, "path": args.path}
            if args.reason:
                body["reason"] = args.reason
            if args.at:
                body["occurred_at"] = args.at
            method = "POST" if args.tree_command == "add" else "DELETE"
            response = client.request(method, "/v1/tree", json=body)
        else:
            params = {"namespace": args.namespace}
            if getattr(args, "at", None):
                params["at"] = args.at
            response = client.get("/v1/tree", params=params)
    answer = response.json()
    if response.status_code != 200:
        return _said_no("tree", answer, response.text)
    if args.tree_command in ("add", "remove"):
        print(f"tree {args.tree_command} {answer['path']} queued (event {answer['event_id']})")
        return 0
    if args.tree_command == "prune":
        if args.format == "json":
            out = {k: answer[k] for k in ("namespace", "now", "pruned")}
            print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())
            return 0
        days = answer["bounds"]["idle_days"]
        print(
            f"{len(answer['pruned'])} node(s) idle for over {days} days as of "
            f"{answer['now'] or '(no memories)'}, left out of the tree:"
        )
        for n in answer["pruned"]:
            print(f"  {n['path']}  ({n['count']} memories, last used {(n['last_use'] or '')[:10]})")
        return 0
    if args.format == "json":
        print(orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode())
    else:
        sys.stdout.write(answer["text"])
        left = [f"{len(answer[k])} {k}" for k in ("pruned", "trimmed") if answer[k]]
        print(
            f"({len(answer['nodes'])} nodes, {answer['placed']} memories placed"
            + (f"; left out: {', '.join(left)}" if left else "")
            + ")"
        )
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    import orjson

    client = _worker_client(args, "context")
    if isinstance(client, int):
        return client
    body: dict[str, Any] = {"namespace": args.namespace, "budget": args.budget, "k": args.k}
    if args.query:
        body["query"] = args.query
    if args.session:
        body["session_id"] = args.session
    with client:
        response = client.post("/v1/context", json=body)
    answer = response.json()
    if response.status_code != 200:
        return _said_no("context", answer, response.text)
    if args.json:
        print(orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode())
    else:
        sys.stdout.write(answer["text"])
    return 0


def _said_no(command: str, answer: dict[str, Any], raw: str) -> int:
    """The worker's refusal in one line, naming the field it is about; exit 1."""
    error = answer.get("error", {})
    where = f" ({error['path']})" if error.get("path") else ""
    print(f"memstream {command}: {error.get('message', raw)}{where}", file=sys.stderr)
    return 1


def cmd_export(args: argparse.Namespace) -> int:
    """MEMORY.md per namespace: the hot memory block, as the context call shows it."""
    client = _worker_client(args, "export")
    if isinstance(client, int):
        return client
    out = Path(args.out)
    with client:
        namespaces = args.namespace
        if not namespaces:
            response = client.post(
                "/sql", json={"sql": "SELECT DISTINCT namespace FROM memories ORDER BY 1"}
            )
            if response.status_code != 200:
                print(f"memstream export: {response.text[:300]}", file=sys.stderr)
                return 1
            namespaces = [row[0] for row in response.json()["rows"]]
        for ns in namespaces:
            response = client.get("/v1/memory.md", params={"namespace": ns})
            if response.status_code != 200:
                print(f"memstream export: {ns}: {response.text[:300]}", file=sys.stderr)
                return 1
            path = out / ns / "MEMORY.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(response.text)
            print(f"{path}")
    return 0


def _rows(
    settings: Settings, sql: str, params: list[Any] | None = None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    from memstream.consumers.analytics import open_analytics

    db = open_analytics(settings)
    try:
        return db.sql(sql, params)
    finally:
        db.close()


def cmd_health(args: argparse.Namespace) -> int:
    from memstream.projections.reports import health_query

    columns, rows = _rows(_settings(args), *health_query(args.namespace))
    _print_table(columns, rows, sys.stdout)
    return 1 if any(r[columns.index("status")] == "degraded" for r in rows) and args.strict else 0


def cmd_metadata(args: argparse.Namespace) -> int:
    """The URLs, commands, paths, versions and ids kept on active memories."""
    import orjson

    from memstream.projections.reports import metadata_query

    columns, rows = _rows(
        _settings(args), *metadata_query(args.kind, args.namespace, args.contains, args.limit)
    )
    if args.json:
        print(orjson.dumps([dict(zip(columns, r, strict=True)) for r in rows]).decode())
    else:
        _print_table(columns, rows, sys.stdout)
    return 0


def cmd_dashboard(args: argparse.Namespace) -> int:
    """The running worker's dashboard address (with the key, if one is set, and the
    namespace); --open starts the desktop's browser on it."""
    from urllib.parse import urlencode

    from memstream.streams.status import running_worker

    settings = _settings(args)
    worker = running_worker(settings.data_dir)
    if worker is None:
        print(
            f"memstream dashboard: no running worker for {settings.data_dir}: "
            "start `memstream worker` (it prints the dashboard's address too)",
            file=sys.stderr,
        )
        return 1
    query = {k: v for k, v in (("key", _api_key(settings)), ("namespace", args.namespace)) if v}
    url = f"{worker['api_url']}/ui/" + (f"?{urlencode(query)}" if query else "")
    print(url)
    if args.open:
        import webbrowser

        webbrowser.open(url)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """One line per health check (the running worker's /health, or what can be told with
    none); exit 1 when anything is degraded."""
    import httpx
    import orjson

    from memstream.consumers.health import offline_checks
    from memstream.core.health import status
    from memstream.streams.status import running_worker

    settings = _settings(args)
    worker = running_worker(settings.data_dir)
    body: dict[str, Any] | None = None
    if worker is not None:
        try:
            response = httpx.get(f"{worker['api_url']}/health", timeout=10)
            body = response.json()
        except (httpx.HTTPError, ValueError) as e:
            body = {
                "status": "degraded",
                "checks": [
                    {"name": "worker", "ok": False, "detail": f"/health did not answer: {e}"}
                ],
            }
    if body is None:
        checks = asyncio.run(offline_checks(settings))
        body = {
            "status": status(checks),
            "problems": [f"{c.name}: {c.detail}" for c in checks if not c.ok],
            "checks": [c.as_dict() for c in checks],
        }
    if args.json:
        print(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
    else:
        for check in body.get("checks", []):
            state = "ok" if check["ok"] else "DEGRADED"
            print(f"{state:9} {check['name']:24} {check['detail']}")
        print(f"status: {body.get('status')}")
    return 0 if body.get("status") == "ok" else 1


def cmd_evidence(args: argparse.Namespace) -> int:
    from memstream.projections.reports import evidence_query, status_text, suggestions

    settings = _settings(args)
    _c, health = _rows(
        settings,
        "SELECT namespace, status, failure_7d, corrected_7d, missed_7d, success_rate_7d "
        "FROM workflow_health WHERE workflow = ?",
        [args.workflow],
    )
    if not health:
        print(f"memstream evidence: no observations of workflow {args.workflow!r}", file=sys.stderr)
        return 1
    for ns, status, failures, corrected, missed, rate in health:
        print(
            f"{args.workflow} in {ns}: {status_text(status)} (7 days: success rate {rate}, "
            f"{failures} failed, {corrected} corrected, {missed} missed)"
        )
        _c, rows = _rows(settings, *evidence_query(ns, args.workflow, args.limit))
        for at, outcome, detail in rows:
            print(f"  {str(at)[:19]}  {outcome:9}  {detail or ''}")
        if rows:
            print("  suggestions:")
            for line in suggestions({outcome for _a, outcome, _d in rows}):
                print(f"   - {line}")
    return 0


def cmd_gaps(args: argparse.Namespace) -> int:
    from memstream.projections.reports import gaps_query

    columns, rows = _rows(_settings(args), *gaps_query(args.days, args.namespace))
    _print_table(columns, rows, sys.stdout)
    return 0


def cmd_workflow(args: argparse.Namespace) -> int:
    from memstream.consumers.producer import Producer

    with Producer(_settings(args), producer_name="memstream-cli") as p:
        event_id = p.workflow(
            namespace=args.namespace,
            workflow=args.workflow,
            outcome=args.outcome,
            detail=args.detail,
        )
    print(event_id)
    return 0


def cmd_evolve(args: argparse.Namespace) -> int:
    import orjson

    body = _worker_admin(args, "evolve", {"apply": args.apply, "namespaces": args.namespace or []})
    if isinstance(body, int):
        return body
    if args.json:
        print(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
        return 0
    for r in body["reports"]:
        mode = "applied" if r["applied"] else "evidence only (--apply to act)"
        print(f"{r['namespace']}: {len(r['candidates'])} candidates, {mode}")
        for c in r["candidates"]:
            print(f"  {c['level']:9} {c['action']:10} {', '.join(c['memory_ids'])}")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from memstream.consumers.mcp_server import run

    overrides = {
        name: value
        for name, value in (
            ("mcp_namespace", args.namespace),
            ("mcp_api_key", args.api_key),
            ("mcp_api_url", args.api_url),
        )
        if value
    }
    settings = _settings(args).with_(**overrides)
    run(settings, args.transport, host=args.host, port=args.port, path=args.path)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memstream", description=__doc__)
    parser.add_argument(
        "--config", help="TOML config file (default: $MEMSTREAM_CONFIG or ./memstream.toml)"
    )
    key_help = (
        "API key sent to the worker (default: $MEMSTREAM_API_KEY); needed when the worker "
        "has MEMSTREAM_API_KEYS"
    )
    parser.add_argument("--api-key", help=key_help)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "broker", help="run the embedded Kafka-protocol broker on a free loopback port"
    )
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--create-topics", action="store_true", help="also create memstream's topics")
    p.add_argument(
        "--stop", action="store_true", help="stop the broker recorded in the data directory"
    )
    p.set_defaults(fn=cmd_broker)

    p = sub.add_parser("topics", help="create (idempotent) or list the topics")
    p.add_argument("action", choices=["create", "list"])
    p.set_defaults(fn=cmd_topics)

    p = sub.add_parser("schemas", help="export JSON Schema for every event type")
    p.add_argument("action", choices=["export"])
    p.add_argument("--out", default="schemas/json")
    p.set_defaults(fn=cmd_schemas)

    p = sub.add_parser("ingest", help="publish conversation turns from a JSONL file")
    p.add_argument(
        "--wait",
        action="store_true",
        help="return once every published turn is extracted and every projection applied "
        "the result (needs a running worker); exit 3 on timeout",
    )
    p.add_argument("--wait-timeout", type=float, default=600.0, help="seconds (default 600)")
    p.add_argument("file", help="JSONL turns, or markdown notes (.md: --namespace needed)")
    p.add_argument("--window", type=int, default=5000, help="publishes in flight at most")
    p.add_argument("--namespace", help="markdown notes: whose notes they are")
    p.add_argument("--speaker", default="User", help="markdown notes: who wrote them")
    p.add_argument("--date", help="markdown notes: their day, if the file name has none")
    p.add_argument(
        "--broker-timeout",
        type=float,
        default=15.0,
        help="seconds the broker may take to acknowledge (default 15); 20 turns in a row "
        "without an acknowledgement stop the ingest with one message (exit 4)",
    )
    p.add_argument("--progress", choices=["auto", "on", "off"], default="auto")
    p.add_argument("--rejects", help="also write rejected line numbers and reasons to this file")
    p.set_defaults(fn=cmd_ingest)

    p = sub.add_parser("worker", help="run a stream worker (creates topics first)")
    p.add_argument("--web-port", type=int, default=None)
    p.add_argument(
        "--datadir",
        default=None,
        help="faust's directory (default: <MEMSTREAM_DATA_DIR>/worker); only to run a second "
        "worker on the same data directory",
    )
    p.add_argument("--loglevel", default="warning")
    p.set_defaults(fn=cmd_worker)

    p = sub.add_parser(
        "mcp",
        help="serve the memory to MCP clients (stdio for desktop and coding agents, "
        "streamable HTTP for remote ones) through the running worker",
    )
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--namespace", help="serve this namespace only ($MEMSTREAM_MCP_NAMESPACE)")
    p.add_argument("--api-key", help="the key presented over stdio ($MEMSTREAM_MCP_API_KEY)")
    p.add_argument("--api-url", help="the worker's API (default: the running worker)")
    p.add_argument("--host", default="127.0.0.1", help="HTTP: the address to listen on")
    p.add_argument("--port", type=int, default=8765, help="HTTP: the port (0: a free one)")
    p.add_argument("--path", default="/mcp", help="HTTP: the endpoint's path")
    p.set_defaults(fn=cmd_mcp)

    p = sub.add_parser("dlq", help="show dead letters with their reasons")
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(fn=cmd_dlq)

    p = sub.add_parser(
        "sql", help="read-only SQL on the analytics projection (works while a worker runs)"
    )
    p.add_argument("query")
    p.add_argument("--format", choices=["table", "csv", "json", "parquet"], default="table")
    p.add_argument("--out", help="output file (required for parquet; default stdout)")
    p.add_argument(
        "--limit",
        type=int,
        default=10_000,
        help="at most this many rows (a notice on stderr says when the limit cut the result)",
    )
    p.set_defaults(fn=cmd_sql)

    p = sub.add_parser(
        "replay", help="rebuild projections from the log (or the archive) and switch over"
    )
    p.add_argument("--projection", choices=["duckdb", "qdrant", "all"], default="all")
    p.add_argument(
        "--from-archive", action="store_true", help="read the Parquet archive instead of Kafka"
    )
    p.add_argument(
        "--until", help="only events up to this time (a point-in-time build; no switch-over)"
    )
    p.add_argument(
        "--no-switch", action="store_true", help="build the new version but keep CURRENT"
    )
    p.add_argument("--progress", choices=["auto", "on", "off"], default="auto")
    p.set_defaults(fn=cmd_replay)

    p = sub.add_parser("recall", help="recall memories for a question (or --batch queries.jsonl)")
    p.add_argument("query", nargs="?")
    p.add_argument("--namespace")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--as-of", dest="as_of")
    p.add_argument("--json", action="store_true")
    p.add_argument("--batch", help="JSONL in: query, namespace, optional k, as_of, id; JSONL out")
    p.set_defaults(fn=cmd_recall)

    p = sub.add_parser(
        "consolidate", help="the dream cycle: decay, rehearsal, expiry, forgetting, merges"
    )
    p.add_argument(
        "--apply", action="store_true", help="write the actions as events (default: dry run)"
    )
    p.add_argument("--namespace", action="append", help="limit to these namespaces (repeatable)")
    p.add_argument("--at", help="event time of the cycle (default: each partition's newest event)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_consolidate)

    for command, what in (
        ("pin", "pin a memory: never forgotten, ranked a little higher"),
        ("unpin", "undo pin or lock"),
        ("lock", "pin and make immutable: no rule and no extraction changes it"),
    ):
        p = sub.add_parser(command, help=what)
        p.add_argument("memory_id")
        p.add_argument("--namespace", required=True)
        p.add_argument("--reason")
        p.set_defaults(fn=cmd_pin)

    p = sub.add_parser("entity", help="the namespace's entities, or everything about one")
    p.add_argument("name", nargs="?", help="an entity (any of its names); none: list them")
    p.add_argument("--namespace", required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_entity)

    p = sub.add_parser("graph", help="a memory's typed edges and neighbours within k hops")
    p.add_argument("memory_id")
    p.add_argument("--namespace", required=True)
    p.add_argument("--hops", type=int, default=2, help="how far to walk (1..4, default 2)")
    p.add_argument("--relation", help="only this relation (causes, same_entity, ...)")
    p.add_argument("--as-of", dest="as_of", help="the edges as they were at this time (ISO 8601)")
    p.add_argument("--format", choices=("text", "json", "dot"), default="text")
    p.set_defaults(fn=cmd_graph)

    p = sub.add_parser("tree", help="the category tree: show, add or remove a node, prune report")
    tree = p.add_subparsers(dest="tree_command", required=True)
    t = tree.add_parser("show", help="the namespace's tree, with the count of memories per node")
    t.add_argument("--namespace", required=True)
    t.add_argument("--format", choices=("text", "json"), default="text")
    t.add_argument("--at", help="judge the 60-day idle rule at this event time (ISO 8601)")
    for command, what in (
        ("add", "add a node (an event): memories about the entity it names go under it"),
        ("remove", "remove a node and what is below it (an event); add brings it back"),
    ):
        t = tree.add_parser(command, help=what)
        t.add_argument("path", help="e.g. work/projects/budget-tracker (1-4 segments)")
        t.add_argument("--namespace", required=True)
        t.add_argument("--reason")
        t.add_argument("--at", help="the event time of the edit (ISO 8601; default now)")
    t = tree.add_parser(
        "prune",
        help="report the nodes the 60-day idle rule leaves out: the rule applies by itself "
        "on every read (from event time, so a rebuild gives the same tree); this command "
        "only shows what it removes and writes nothing",
    )
    t.add_argument("--namespace", required=True)
    t.add_argument("--at", help="as of this event time (ISO 8601; default the namespace's now)")
    t.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(fn=cmd_tree)

    p = sub.add_parser(
        "context", help="what to put into a prompt: hot memory, the session, the recall"
    )
    p.add_argument("--namespace", required=True)
    p.add_argument("--session", help="add the session's working set (at most 9 memories)")
    p.add_argument("--query", help="add what recall finds for this question")
    p.add_argument("--budget", type=int, default=1000, help="tokens (about 4 characters each)")
    p.add_argument("-k", type=int, default=10, help="recall results to consider")
    p.add_argument("--json", action="store_true", help="the block with its memory ids")
    p.set_defaults(fn=cmd_context)

    p = sub.add_parser("export", help="write MEMORY.md (the hot memory) per namespace")
    p.add_argument("--format", choices=["markdown"], default="markdown")
    p.add_argument("--namespace", action="append", help="only these (repeatable)")
    p.add_argument("--out", default="memory-export", help="directory (default memory-export)")
    p.set_defaults(fn=cmd_export)

    p = sub.add_parser(
        "health",
        help="7- and 30-day health per workflow: healthy, degraded, or insufficient (< 3 in 7 days)",
    )
    p.add_argument("--namespace")
    p.add_argument("--strict", action="store_true", help="exit 1 when a workflow is degraded")
    p.set_defaults(fn=cmd_health)

    p = sub.add_parser(
        "metadata", help="URLs, commands, paths, versions and ids kept on the memories"
    )
    p.add_argument("--kind", choices=["url", "command", "path", "version", "id"])
    p.add_argument("--namespace")
    p.add_argument("--contains", help="values holding this fragment (any case)")
    p.add_argument("--limit", type=int, default=1000)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_metadata)

    p = sub.add_parser(
        "dashboard", help="the running worker's web dashboard address (read-only, same keys)"
    )
    p.add_argument("--namespace", help="open on this namespace")
    p.add_argument("--open", action="store_true", help="open it in the desktop's browser")
    p.set_defaults(fn=cmd_dashboard)

    p = sub.add_parser(
        "status",
        help="is the system well: broker, projections, agents, read positions (exit 1 if not)",
    )
    p.add_argument("--json", action="store_true", help="the checks as JSON")
    p.set_defaults(fn=cmd_status)

    p = sub.add_parser(
        "evidence", help="recent failures and corrections of a workflow, with suggestions"
    )
    p.add_argument("workflow")
    p.add_argument("--limit", type=int, default=10)
    p.set_defaults(fn=cmd_evidence)

    p = sub.add_parser("gaps", help="topics searched often but answered poorly")
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--namespace")
    p.set_defaults(fn=cmd_gaps)

    p = sub.add_parser("workflow", help="record a workflow observation")
    p.add_argument("action", choices=["observe"])
    p.add_argument("workflow")
    p.add_argument("outcome", choices=["success", "failure", "corrected", "missed"])
    p.add_argument("--namespace", required=True)
    p.add_argument("--detail")
    p.set_defaults(fn=cmd_workflow)

    p = sub.add_parser(
        "evolve", help="evolution candidates (deprecate, refine, archive, merge, induce)"
    )
    p.add_argument(
        "--apply", action="store_true", help="write the actions as events (default: evidence only)"
    )
    p.add_argument("--namespace", action="append")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_evolve)

    p = sub.add_parser(
        "recover",
        help="after the broker lost the log: restore it from the archive and rebuild the "
        "read models (worker stopped; README: Recovery)",
    )
    p.set_defaults(fn=cmd_recover)

    p = sub.add_parser("verify", help="rebuild side by side and diff against the live projections")
    p.set_defaults(fn=cmd_verify)

    p = sub.add_parser("audit", help="the causal chain of a memory, or a namespace as of a time")
    p.add_argument("memory_id", nargs="?")
    p.add_argument("--namespace")
    p.add_argument("--as-of", dest="as_of")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_audit)

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
    # after the command too: `memstream sql ... --api-key K` (aliases share one parser)
    for each in {id(p): p for p in sub.choices.values()}.values():
        if "--api-key" not in each._option_string_actions:  # mcp has its own
            each.add_argument("--api-key", default=argparse.SUPPRESS, help=key_help)
    return parser


def main(argv: list[str] | None = None) -> int:
    import httpx

    from memstream.consumers.worker_api import WorkerApiError
    from memstream.projections.user_sql import UserSQLError

    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args))
    except ConfigError as e:
        print(f"memstream: {e}", file=sys.stderr)
        return 2
    except (WorkerApiError, UserSQLError) as e:  # one line, never a traceback
        print(f"memstream {args.command}: {e}", file=sys.stderr)
        return 1
    except httpx.HTTPError as e:
        print(f"memstream {args.command}: the worker's API failed: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
