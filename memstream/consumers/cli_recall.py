"""``memstream`` commands that ask and tend the memory: recall, consolidate, evolve,
evidence, gaps, workflows."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memstream.consumers.cli_common import (
    _api_key,
    _parse_time,
    _print_table,
    _rows,
    _settings,
    _worker_admin,
)
from memstream.consumers.worker_api import auth_headers, refusal
from memstream.infra.settings import Settings
from memstream.schemas.errors import EventValidationError


def _recaller(settings: Settings, include_low_confidence: bool = False) -> Any:
    """A function (namespace, query, k, as_of) -> result dict: through the running worker, or
    straight from the retrieval store when no worker holds it; ``include_low_confidence``:
    the whole answer even when nothing relevant was found."""
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
                    "include_low_confidence": include_low_confidence,
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

        when = _parse_time(as_of, "as_of") if as_of else None
        # the same checks as a request to the worker's API (k, ids, text limits)
        make_event(
            RecallRequested(query_id=query_id or "unset", query=query, k=k, as_of=when),
            namespace=namespace,
            limits=settings.limits,
        )
        return service.recall_sync(
            namespace,
            query,
            k=k,
            as_of=when,
            query_id=query_id,
            include_low_confidence=include_low_confidence,
        ).as_dict()

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
    recall = _recaller(settings, args.include_low_confidence)
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
