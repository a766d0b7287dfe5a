"""The memory routes of the HTTP API (mem0-style ``/v1/memories`` plus ``/v1/recall``).

Writes are events: ``add`` publishes turns, ``update``/``delete`` publish MemoryEdit,
``feedback`` and ``workflows`` publish their events; each answers once the broker has
acknowledged (ack-first: extraction happens later). Reads come from the projections.
Every route checks the caller's key against the namespace it names.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter, deque
from datetime import datetime
from typing import Any

import orjson
from aiohttp import web

from memstream.consumers.after_answer import AfterAnswer
from memstream.consumers.auth import AuthError, Grant, check, grant_for, parse_keys
from memstream.consumers.http_api import error, json_response, read_json
from memstream.consumers.known_ids import IdDirectory, UnknownId
from memstream.consumers.producer import AsyncProducer, turn_event
from memstream.consumers.recall_pool import RecallBusy
from memstream.core.event_time import CODES as EVENT_TIME_CODES
from memstream.core.event_time import event_time_error
from memstream.core.metadata import decode as metadata_map
from memstream.core.recall_filters import parse as parse_filters
from memstream.infra.settings import Settings
from memstream.schemas._fields import parse_datetime, utc_now
from memstream.schemas.envelope import NAMESPACE_RE, make_event
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import MemoryEdit, RecallRequested

MEMORY_COLUMNS = (
    "namespace, memory_id, text, category, kind, status, tier, importance, confidence, q_value, stability, "
    "entities, valid_from, valid_until, source_turn_ids, created_at, updated_at, pinned, immutable, superseded_by, "
    "session_id, access_count, last_access, metadata"
)

#: how long GET waits for the analytics projection to catch up with a memory it knows
GET_WAIT_S = 10.0

log = logging.getLogger("memstream.http")


def _time(value: Any, field: str) -> datetime | None:
    return None if value is None else parse_datetime(str(value), field)


def _namespace(body: dict[str, Any]) -> str:
    ns = body.get("namespace") or body.get("user_id") or body.get("agent_id")
    if not isinstance(ns, str) or not ns:
        raise EventValidationError(
            "missing_field", "name the namespace (namespace, user_id or agent_id)", "namespace"
        )
    return _checked_namespace(ns)


def _checked_namespace(ns: str) -> str:
    if not NAMESPACE_RE.fullmatch(ns):
        raise EventValidationError(
            "bad_namespace",
            "1-128 characters: letters, digits and ._:@- (starting with a letter or digit)",
            "namespace",
        )
    return ns


def _first_present(body: dict[str, Any], *names: str, default: Any) -> Any:
    for name in names:
        if body.get(name) is not None:
            return body[name]
    return default


def _limit(value: str | None, default: int, most: int) -> int:
    if value is None:
        return default
    try:
        limit = int(value)
    except ValueError:
        raise EventValidationError(
            "wrong_type", f"expected an integer, got {value[:64]!r}", "limit"
        ) from None
    if limit < 1:
        raise EventValidationError("out_of_range", "must be at least 1", "limit")
    return min(limit, most)


def _filters_of(body: dict[str, Any]) -> dict[str, Any]:
    """The request's recall filters (``"filters": {...}``), checked before anything runs."""
    filters = body.get("filters") or {}
    if not isinstance(filters, dict):
        raise EventValidationError("wrong_type", "an object of filters", "filters")
    parse_filters(filters)  # an unknown or empty filter is an error naming it
    return filters


class MemoryRoutes:
    def __init__(self, settings: Settings, api: Any) -> None:
        self.settings = settings
        self.api = api  # ApiService: .projections, .recall
        self.keys = parse_keys(settings.api_keys)
        self.producer: AsyncProducer | None = None
        self.metrics: Counter[str] = Counter()
        # the last 1,000 recalls' times for /metrics (a bounded deque: no copy per recall)
        self.latency_ms: deque[float] = deque(maxlen=1000)
        self.ids = IdDirectory(api)  # 404/403 for ids feedback and edits name
        self._telemetry = AfterAnswer("recall telemetry")

    def register(self, app: web.Application) -> None:
        r = app.router
        r.add_post("/v1/memories", self.add)
        r.add_get("/v1/memories", self.get_all)
        r.add_post("/v1/memories/search", self.search)
        r.add_get("/v1/memories/{memory_id}", self.get)
        r.add_put("/v1/memories/{memory_id}", self.update)
        r.add_delete("/v1/memories/{memory_id}", self.delete)
        r.add_get("/v1/memories/{memory_id}/history", self.history)
        r.add_post("/v1/memories/{memory_id}/{action:pin|unpin|lock}", self.pin)
        r.add_post("/v1/recall", self.recall)
        r.add_post("/v1/feedback", self.feedback)
        r.add_post("/v1/workflows", self.workflow)
        r.add_get("/metrics", self.prometheus)

    async def start(self) -> None:
        self.producer = await AsyncProducer(self.settings, producer_name="memstream-http").start()

    async def stop(self) -> None:
        recall = self.api.built_recall()
        if recall is not None:  # the recalls' access records, sent after their answers
            await recall.access.drain()
        await self._telemetry.drain()  # what recalls reported, sent before the producer goes
        if self.producer is not None:
            await self.producer.stop()

    # --- helpers ------------------------------------------------------------------

    def grant(self, request: web.Request) -> Grant:
        header = request.headers.get("Authorization", "")
        key = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else None
        return grant_for(self.keys, key or request.headers.get("X-API-Key"))

    def authorize(self, request: web.Request, namespace: str) -> None:
        check(self.grant(request), namespace)

    def _query_namespace(self, request: web.Request) -> str:
        """The namespace a read names in its query string, checked against the caller's key."""
        ns = request.query.get("namespace") or request.query.get("user_id") or ""
        if not ns:
            raise EventValidationError("missing_field", "?namespace=...", "namespace")
        self.authorize(request, _checked_namespace(ns))
        return ns

    async def _guard(self, request: web.Request, handler: Any) -> web.Response:
        self.metrics[f"requests_{request.method.lower()}"] += 1
        try:
            response: web.Response = await handler()
            return response
        except AuthError as e:
            self.metrics["auth_rejected"] += 1
            return error(e.status, e.code, e.message)
        except RecallBusy as e:
            self.metrics["recalls_rejected_busy"] += 1
            busy = error(429, "too_many_recalls", str(e))
            busy.headers["Retry-After"] = str(e.retry_after)
            return busy
        except UnknownId as e:
            self.metrics["unknown_ids"] += 1
            return json_response(
                {"error": {"code": e.code, "message": e.message, "path": e.path}}, e.status
            )
        except EventValidationError as e:
            self.metrics["invalid_requests"] += 1
            # well-formed but out of bounds in time: unprocessable, not malformed
            status = 422 if e.code in EVENT_TIME_CODES else 400
            return json_response(
                {"error": {"code": e.code, "message": e.message, "path": e.path}}, status
            )

    def _duck(self) -> Any:
        duck = self.api.projections.duckdb if self.api.projections else None
        if duck is None:
            raise web.HTTPServiceUnavailable(text="this worker does not run the DuckDB projection")
        return duck

    async def _query(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = await asyncio.to_thread(self._duck().rows, sql, params)
        return rows

    @staticmethod
    def _mem0(row: dict[str, Any]) -> dict[str, Any]:
        """mem0's names ("id", "memory") next to ours, so either client code works; the
        metadata as a map (URLs, commands, ... and the producer's under 'turn')."""
        out = {"id": row["memory_id"], "memory": row["text"], **row}
        if "metadata" in out:
            out["metadata"] = metadata_map(out["metadata"])
        return out

    def _publisher(self) -> AsyncProducer:
        if self.producer is None:
            raise web.HTTPServiceUnavailable(text="the API producer is not started")
        return self.producer

    # --- writes ---------------------------------------------------------------------

    async def add(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            body = await read_json(request)
            ns = _namespace(body)
            self.authorize(request, ns)
            messages = body.get("messages")
            if isinstance(messages, str):
                messages = [{"role": "user", "content": messages}]
            if not isinstance(messages, list) or not messages:
                raise EventValidationError(
                    "missing_field", "messages: a string or a list of {role, content}", "messages"
                )
            session = str(body.get("run_id") or body.get("session_id") or "default")
            at = _time(body.get("occurred_at"), "occurred_at")
            metadata = body.get("metadata") or {}
            envs = []
            for i, m in enumerate(messages):
                if not isinstance(m, dict):
                    raise EventValidationError(
                        "wrong_type", "each message is an object", f"messages[{i}]"
                    )
                text = m.get("content", m.get("text"))
                role = m.get("role", "user")
                turn_id = m.get("turn_id") or f"{session}-{uuid.uuid4().hex[:16]}"
                envs.append(
                    turn_event(
                        namespace=ns,
                        session_id=session,
                        turn_id=turn_id,
                        role=role,
                        speaker=m.get("speaker") or m.get("name") or role,
                        text=text,  # type: ignore[arg-type]  # validated by make_event
                        occurred_at=at,
                        metadata=metadata,
                        producer="memstream-http",
                        settings=self.settings,
                    )
                )
            ids = await self._publisher().publish_many(envs)
            return json_response(
                {
                    "results": [
                        {"event_id": e, "turn_id": env.payload.turn_id, "status": "queued"}
                        for e, env in zip(ids, envs, strict=True)
                    ]
                }
            )

        return await self._guard(request, run)

    async def _edit(self, request: web.Request, action: str) -> web.Response:
        async def run() -> web.Response:
            body = await read_json(request) if request.can_read_body else {}
            ns = request.query.get("namespace") or _namespace(body)
            self.authorize(request, ns)
            edit = MemoryEdit(
                memory_id=request.match_info["memory_id"],
                action=action,  # type: ignore[arg-type]
                text=body.get("text") if action == "update" else None,
                reason=body.get("reason"),
            )
            env = make_event(
                edit, namespace=ns, producer="memstream-http", limits=self.settings.limits
            )
            # valid, but is it a memory of this namespace? (404/403, nothing published)
            await self.ids.check_memories(ns, [edit.memory_id], "memory_id")
            return json_response(
                {"event_id": await self._publisher().publish(env), "status": "queued"}
            )

        return await self._guard(request, run)

    async def update(self, request: web.Request) -> web.Response:
        return await self._edit(request, "update")

    async def delete(self, request: web.Request) -> web.Response:
        return await self._edit(request, "delete")

    async def pin(self, request: web.Request) -> web.Response:
        """POST /v1/memories/{id}/pin {"action": "pin" | "unpin" | "lock"}: a MemoryEdit."""
        action = request.match_info.get("action", "pin")
        return await self._edit(request, action)

    async def feedback(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            body = await read_json(request)
            ns = _namespace(body)
            self.authorize(request, ns)
            single = bool(body.get("memory_id")) and not body.get("memory_ids")
            env = self._publisher().feedback_event(
                namespace=ns,
                memory_ids=body.get("memory_ids") or ([body["memory_id"]] if single else []),
                query_id=body.get("query_id"),
                outcome=body.get("outcome"),
                reward=body.get("reward"),
                reason=body.get("reason"),
                correction=body.get("correction"),
                occurred_at=_time(body.get("occurred_at"), "occurred_at"),
            )
            # valid; unknown or foreign ids are the caller's error (404/403), not an event the
            # agents could only dead-letter
            fb = env.payload
            if fb.query_id:
                await self.ids.check_query(ns, fb.query_id)
            await self.ids.check_memories(
                ns, fb.memory_ids, "memory_id" if single else "memory_ids"
            )
            event_id = await self._publisher().publish(env)
            return json_response({"event_id": event_id, "status": "queued"})

        return await self._guard(request, run)

    async def workflow(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            body = await read_json(request)
            ns = _namespace(body)
            self.authorize(request, ns)
            event_id = await self._publisher().workflow(
                namespace=ns,
                workflow=body.get("workflow"),  # type: ignore[arg-type]
                outcome=body.get("outcome"),  # type: ignore[arg-type]
                detail=body.get("detail"),
                evidence=body.get("evidence"),
                occurred_at=_time(body.get("occurred_at"), "occurred_at"),
            )
            return json_response({"event_id": event_id, "status": "queued"})

        return await self._guard(request, run)

    def _observe_later(self, namespace: str, workflow: str, outcome: str, detail: str) -> None:
        self._telemetry.send(self.observe(namespace, workflow, outcome, detail))

    async def observe(self, namespace: str, workflow: str, outcome: str, detail: str) -> None:
        """The system's own continuity operations are workflows too (telemetry, never recalled)."""
        await self._publisher().workflow(
            namespace=namespace, workflow=workflow, outcome=outcome, detail=detail
        )

    # --- reads ----------------------------------------------------------------------

    async def recall(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            body = await read_json(request)
            ns = _namespace(body)
            self.authorize(request, ns)
            query = body.get("query")
            if not isinstance(query, str) or not query.strip():
                raise EventValidationError(
                    "missing_field", "query: the question to recall for", "query"
                )
            # Checked exactly like a RecallRequested on the bus (k, ids, text limits).
            query_id = body.get("query_id")
            asked = make_event(
                RecallRequested(
                    query_id=query_id or "unset",
                    query=query,
                    # k=0 is an error, not "the default": only a missing k means 10
                    k=_first_present(body, "k", "top_k", default=10),
                    as_of=_time(body.get("as_of"), "as_of"),
                    include_superseded=bool(body.get("include_superseded")),
                    include_archived=bool(body.get("include_archived")),
                    include_low_confidence=bool(body.get("include_low_confidence")),
                    filters=_filters_of(body),
                    at=_time(body.get("at"), "at"),
                ),
                namespace=ns,
                session_id=body.get("session_id"),
                limits=self.settings.limits,
            )
            req: RecallRequested = asked.payload
            if req.at is not None and (
                late := event_time_error(
                    req.at, intake=utc_now(), skew=self.settings.max_future_skew, path="at"
                )
            ):
                raise late  # the access event it records would be refused as well
            service = self.api.recall_service()
            if service is None:
                raise web.HTTPServiceUnavailable(
                    text="this worker does not run the retrieval projection"
                )
            started = time.perf_counter()
            result = await service.recall(
                ns,
                query,
                k=req.k,
                as_of=req.as_of,
                include_superseded=req.include_superseded,
                include_archived=req.include_archived,
                include_low_confidence=req.include_low_confidence,
                session_id=asked.session_id,
                query_id=query_id,
                filters=parse_filters(req.filters),
                now=req.at,
            )
            # the recall's own telemetry does not hold the answer back (the access event
            # the recall recorded did: feedback on the query id may follow at once)
            self._observe_later(
                ns,
                "recall",
                "success" if result.results else "missed",
                f"{len(result.results)} results, confidence {result.confidence}",
            )
            took = (time.perf_counter() - started) * 1000
            self.latency_ms.append(took)
            self.metrics["recalls"] += 1
            response = json_response(result.as_dict())
            # the recall's own time, without HTTP, JSON and the wait for the event loop
            # (W3C Server-Timing: browsers' developer tools and clients can read it)
            response.headers["Server-Timing"] = f"recall;dur={took:.2f}"
            return response

        return await self._guard(request, run)

    async def search(self, request: web.Request) -> web.Response:
        """mem0's search shape: {"results": [{"id", "memory", "score", ...}]}."""
        response = await self.recall(request)
        if response.status != 200:
            return response
        assert response.body is not None
        data = orjson.loads(response.body)  # type: ignore[arg-type]
        results = [
            {
                "id": r["memory_id"],
                "memory": r["text"],
                "score": r["score"],
                "metadata": {"category": r["category"], "source_turn_ids": r["source_turn_ids"]},
                "created_at": r["created_at"],
                "explain": r["explain"],
            }
            for r in data["results"]
        ]
        return json_response(
            {"results": results, "query_id": data["query_id"], "confidence": data["confidence"]}
        )

    async def get(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            ns = self._query_namespace(request)
            memory_id = request.match_info["memory_id"]
            rows = await self._memory_row(ns, memory_id)
            if not rows:
                return error(404, "not_found", "no such memory in this namespace")
            if rows[0]["status"] == "archived" and await self._deleted(ns, memory_id):
                # as mem0 users expect: a deleted memory is gone for `get`; forgetting by the
                # lifecycle is not a delete (it can be restored) and stays visible
                return error(
                    404,
                    "deleted",
                    f"memory {memory_id} was deleted; its history stays at "
                    f"/v1/memories/{memory_id}/history",
                )
            return json_response(self._mem0(rows[0]))

        return await self._guard(request, run)

    async def _memory_row(self, ns: str, memory_id: str) -> list[dict[str, Any]]:
        """The memory's analytics row. The analytics projection applies the log at its own
        pace, so a memory recall has just returned (the retrieval store) or this worker's
        agents hold can be a batch away from it: then the read waits for it, up to
        ``GET_WAIT_S``, instead of answering 404 for a memory that exists."""
        sql = f"SELECT {MEMORY_COLUMNS} FROM memory_view WHERE namespace = ? AND memory_id = ?"
        rows = await self._query(sql, [ns, memory_id])
        if rows or not await self.ids.holds(ns, memory_id):
            return rows
        deadline = asyncio.get_running_loop().time() + GET_WAIT_S
        while not rows and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
            rows = await self._query(sql, [ns, memory_id])
        return rows

    async def _deleted(self, ns: str, memory_id: str) -> bool:
        """Was the memory's latest archive/restore a user's delete?"""
        last = await self._query(
            "SELECT type, payload->>'rule' AS rule FROM memory_log WHERE namespace = ? AND "
            "memory_id = ? AND type IN ('MemoryArchived', 'MemoryRestored') "
            "ORDER BY log_partition DESC, log_offset DESC LIMIT 1",
            [ns, memory_id],
        )
        return (
            bool(last) and last[0]["type"] == "MemoryArchived" and last[0]["rule"] == "user_delete"
        )

    async def get_all(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            ns = self._query_namespace(request)
            where, params = ["namespace = ?"], [ns]
            for column in ("status", "category", "tier", "session_id"):
                if request.query.get(column):
                    where.append(f"{column} = ?")
                    params.append(request.query[column])
            limit = _limit(request.query.get("limit"), 1000, 10_000)
            rows = await self._query(
                f"SELECT {MEMORY_COLUMNS} FROM memory_view WHERE {' AND '.join(where)} "
                f"ORDER BY created_at, memory_id LIMIT {limit}",
                params,
            )
            return json_response({"results": [self._mem0(r) for r in rows]})

        return await self._guard(request, run)

    async def history(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            ns = self._query_namespace(request)
            rows = await self._query(
                "SELECT event_id, type, occurred_at, recorded_at, session_id, causation_id, correlation_id, "
                "producer, payload FROM memory_log WHERE namespace = ? AND (memory_id = ? OR "
                "payload->>'superseded_by' = ? OR payload->>'captured_by' = ? OR payload->>'target_id' = ?) "
                "ORDER BY log_partition, log_offset",
                [ns, *([request.match_info["memory_id"]] * 4)],
            )
            for row in rows:
                row["payload"] = (
                    orjson.loads(row["payload"])
                    if isinstance(row["payload"], str)
                    else row["payload"]
                )
            return json_response(
                {"memory_id": request.match_info["memory_id"], "namespace": ns, "events": rows}
            )

        return await self._guard(request, run)

    async def prometheus(self, request: web.Request) -> web.Response:
        metrics = Counter(self.metrics)
        recall = self.api.built_recall()
        # sends made after their answers that failed, when there were any
        for name, sends in (
            ("telemetry_failed", self._telemetry),
            ("access_failed", recall and recall.access),
        ):
            if sends and sends.failed:
                metrics[name] = sends.failed
        lines = [f"memstream_http_{name}_total {value}" for name, value in sorted(metrics.items())]
        if self.latency_ms:
            ordered = sorted(self.latency_ms)
            for q in (0.5, 0.99):
                lines.append(
                    f'memstream_recall_latency_ms{{quantile="{q}"}} '
                    f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.3f}"
                )
        proj = self.api.projections
        for kind, stats in (proj.lag() if proj else {}).items():
            for name, value in stats.items():
                lines.append(f'memstream_projection_{name}_total{{projection="{kind}"}} {value}')
        return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")
