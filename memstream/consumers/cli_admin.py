"""``memstream`` commands for operators and auditors: SQL, replay, recover, verify, audit,
health, status, the dashboard and the MCP server."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from typing import Any

from memstream.consumers.cli_common import (
    _api_key,
    _parse_time,
    _print_table,
    _rows,
    _settings,
)


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
    until = _parse_time(args.until, "--until") if args.until else None
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
            when = _parse_time(args.as_of, "--as-of")
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


def cmd_health(args: argparse.Namespace) -> int:
    from memstream.projections.reports import health_query

    columns, rows = _rows(_settings(args), *health_query(args.namespace))
    _print_table(columns, rows, sys.stdout)
    return 1 if any(r[columns.index("status")] == "degraded" for r in rows) and args.strict else 0


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
        if body.get("roles"):
            print(f"roles: {','.join(body['roles'])}")
        print(f"status: {body.get('status')}")
    return 0 if body.get("status") == "ok" else 1


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
