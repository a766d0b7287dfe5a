"""The worker's HTTP API (aiohttp, served on the worker's own event loop).

JSON in, JSON out; every error is ``{"error": {"code", "message"}}`` with a fitting status.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
from aiohttp import web
from mode import Service

from memstream.consumers.json_values import jsonable
from memstream.consumers.producer import PublishError
from memstream.infra.settings import Settings
from memstream.projections.user_sql import SQLCancelled, UserSQLError
from memstream.schemas._fields import parse_datetime
from memstream.schemas.errors import EventValidationError

log = logging.getLogger("memstream.http")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _default(value: Any) -> Any:
    if isinstance(value, dt.date | dt.time | dt.timedelta):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if hasattr(value, "__float__"):
        return float(value)
    return str(value)


def json_response(data: Any, status: int = 200) -> web.Response:
    try:
        body = orjson.dumps(data, default=_default, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # an integer past 64 bits: orjson writes none (never a 500 for it)
        body = orjson.dumps(jsonable(data), default=_default, option=orjson.OPT_NON_STR_KEYS)
    return web.Response(body=body, status=status, content_type="application/json")


def error(status: int, code: str, message: str) -> web.Response:
    return json_response({"error": {"code": code, "message": message}}, status)


@web.middleware
async def errors_as_json(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as e:
        return error(e.status, e.reason.lower().replace(" ", "_"), e.text or e.reason)
    except PublishError as e:  # the broker did not take the events: nothing was recorded
        log.warning("HTTP %s %s: %s", request.method, request.path, e)
        response = error(503, "broker_unavailable", str(e))
        response.headers["Retry-After"] = "5"
        return response
    except Exception as e:  # never an HTML traceback to the caller
        log.exception("HTTP %s %s failed", request.method, request.path)
        return error(500, "internal_error", f"{type(e).__name__}: {e}")


async def read_json(request: web.Request) -> dict[str, Any]:
    try:
        body = orjson.loads(await request.read())
    except orjson.JSONDecodeError as e:
        raise web.HTTPBadRequest(text=f"body is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="body must be a JSON object")
    return body


def _int_field(body: dict[str, Any], key: str, default: int) -> int:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise web.HTTPBadRequest(text=f"{key}: expected a positive integer, got {value!r:.64}")
    return value


def _namespaces(body: dict[str, Any]) -> set[str] | None:
    """The optional ``namespaces`` list of the admin routes (None: all of them)."""
    value = body.get("namespaces") or []
    if not isinstance(value, list) or not all(isinstance(ns, str) for ns in value):
        raise web.HTTPBadRequest(text="namespaces: expected a list of namespace strings")
    return set(value) or None


def _at(body: dict[str, Any]) -> dt.datetime | None:
    """The optional event time of a dream cycle (ISO 8601; no offset means UTC)."""
    value = body.get("at")
    if value is None:
        return None
    try:
        return parse_datetime(value, "at", naive_is_utc=True)
    except EventValidationError as e:  # a time UTC cannot hold was a 500 further in
        raise web.HTTPBadRequest(text=f"at: {e.message}") from None


class ApiService(Service):
    """Serves the API routes that the worker's components register."""

    def __init__(
        self, settings: Settings, host: str, port: int, *, routes: str = "full", **kwargs: Any
    ) -> None:
        """``routes``: "full", or "ops" for a node without the API role (core/roles.py):
        health, the OpenAPI document, the projections' digest and admin SQL only."""
        super().__init__(**kwargs)
        from memstream.consumers.http_insights import InsightRoutes
        from memstream.consumers.http_memory import MemoryRoutes

        self.settings = settings
        self.host, self.port = host, port
        self.web = web.Application(middlewares=[errors_as_json], client_max_size=4 * 1024 * 1024)
        self._runner: web.AppRunner | None = None
        # admin SQL has threads of its own: a long statement never holds up another call
        self._sql_threads = ThreadPoolExecutor(2, thread_name_prefix="user-sql")
        self.projections: Any = None  # set by the worker: projections.service.ProjectionService
        self.health_monitor: Any = None  # set by the worker: consumers.health.HealthMonitor
        self.publish_access: Any = None  # set by the worker: publishes MemoryAccessed
        self._recall: Any = None
        self.memory = MemoryRoutes(settings, self)
        self.web.router.add_get("/health", self.health)
        self.web.router.add_post("/sql", self.sql)
        self.web.router.add_get("/projections/digest", self.digest)
        self.web.router.add_get("/openapi.json", self.openapi)
        self.web.router.add_post("/v1/consolidate", self.consolidate)
        self.web.router.add_post("/v1/evolve", self.evolve)
        self.handles: dict[str, Any] = {}  # set by the worker: the agents' shared state
        self.roles: list[str] = []  # set by the worker: the node's roles, for /health
        if routes == "ops":
            return
        self.memory.register(self.web)
        InsightRoutes(self.memory).register(self.web)
        from memstream.consumers.http_context import ContextRoutes

        ContextRoutes(self.memory).register(self.web)
        from memstream.consumers.http_tree import TreeRoutes

        TreeRoutes(self.memory).register(self.web)
        from memstream.consumers.http_entities import EntityRoutes

        EntityRoutes(self.memory).register(self.web)
        from memstream.consumers.http_graph import GraphRoutes

        GraphRoutes(self.memory).register(self.web)
        from memstream.consumers.http_dashboard import DashboardRoutes

        DashboardRoutes(self.memory).register(self.web)

    async def on_start(self) -> None:
        await self.memory.start()
        self._runner = web.AppRunner(self.web, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self.port).start()

    async def on_stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        self._sql_threads.shutdown(wait=False, cancel_futures=True)
        await self.memory.stop()

    def built_recall(self) -> Any:
        """The recall service if it was built (``None`` until the first recall)."""
        return self._recall

    def recall_service(self) -> Any:
        """The recall service over this worker's retrieval projection (built on first use)."""
        if (
            self._recall is None
            and self.projections is not None
            and self.projections.qdrant is not None
        ):
            from memstream.consumers.recall_factory import recall_service_for

            self._recall = recall_service_for(self.settings, self.projections, self.publish_access)
        return self._recall

    def _admin(self, request: web.Request) -> web.Response | None:
        from memstream.consumers.auth import AuthError

        try:
            if not self.memory.grant(request).admin:
                return error(403, "forbidden", "admin routes need a key for every namespace (*)")
        except AuthError as e:
            return error(e.status, e.code, e.message)
        return None

    async def openapi(self, request: web.Request) -> web.Response:
        from memstream.consumers.openapi import document

        return json_response(document())

    async def health(self, request: web.Request) -> web.Response:
        """Answers at once from the monitor's latest probe (consumers/health.py)."""
        proj = self.projections
        if self.health_monitor is not None:
            verdict = self.health_monitor.report()
        else:  # an API without a monitor (tests): the projections' own account
            problems = proj.problems() if proj else []
            verdict = {"status": "degraded" if problems else "ok", "problems": problems}
        return json_response(
            {
                **verdict,
                "roles": self.roles,
                "projections": proj.lag() if proj else {},
                "positions": proj.positions() if proj else {},
                "caught_up": proj.caught_up() if proj else None,
            }
        )

    async def sql(self, request: web.Request) -> web.Response:
        """Admin SQL on a DuckDB connection of its own, on threads of its own: recall never
        waits for it. Stopped after ``sql_timeout_seconds``, or when the client goes away."""
        if (denied := self._admin(request)) is not None:
            return denied
        body = await read_json(request)
        query = body.get("sql")
        if not isinstance(query, str) or not query.strip():
            return error(400, "missing_sql", 'send {"sql": "SELECT ..."}')
        duck = self.projections.duckdb if self.projections else None
        if duck is None:
            return error(503, "no_duckdb", "this worker does not run the DuckDB projection")
        limit, params = _int_field(body, "limit", 10_000), body.get("params") or None
        statement = duck.statement(self.settings.sql_timeout_seconds)
        loop = asyncio.get_running_loop()
        running = loop.run_in_executor(self._sql_threads, statement.run, query, limit, params)
        try:
            while not running.done():
                await asyncio.wait({running}, timeout=0.2)
                if not running.done() and (
                    request.transport is None or request.transport.is_closing()
                ):
                    statement.cancel("the client went away")
                    await asyncio.wait({running})
        except asyncio.CancelledError:
            statement.cancel("the request was cancelled")
            raise
        try:
            columns, rows = running.result()
        except SQLCancelled as e:
            self.memory.metrics["sql_timeouts" if e.code == "sql_timeout" else "sql_cancelled"] += 1
            log.warning("SQL stopped after %.1f s: %s", statement.seconds, e)
            status = 408 if e.code == "sql_timeout" else 499
            return error(status, e.code, str(e))
        except UserSQLError as e:
            return error(400, e.code, str(e))
        return json_response({"columns": columns, "rows": jsonable(rows)})

    async def digest(self, request: web.Request) -> web.Response:
        """Live projection digests for ``memstream verify`` (waits until caught up)."""
        if (denied := self._admin(request)) is not None:
            return denied
        proj = self.projections
        if proj is None:
            return error(503, "no_projections", "this worker runs no projections")
        for _ in range(100):
            if proj.caught_up():
                break
            await asyncio.sleep(0.1)
        out: dict[str, Any] = {}
        if proj.duckdb is not None:
            d = await asyncio.to_thread(proj.duckdb.digest)
            out["duckdb"] = {
                "positions": [[t, p, o] for (t, p), o in d.positions.items()],
                "tables": d.tables,
            }
        if proj.qdrant is not None:
            namespaces = request.query.get("namespaces", "")
            wanted = [n for n in namespaces.split(",") if n]
            out["qdrant"] = await asyncio.to_thread(proj.qdrant.digest, wanted)
        return json_response(out)

    async def consolidate(self, request: web.Request) -> web.Response:
        """Run the dream cycle over this worker's partitions (dry run unless apply). An admin
        key may name any namespaces (or none: all of them); a scoped key only its own."""
        from memstream.consumers.auth import AuthError, check

        try:
            grant = self.memory.grant(request)
        except AuthError as e:
            return error(e.status, e.code, e.message)
        body = await read_json(request) if request.can_read_body else {}
        namespaces, at = _namespaces(body), _at(body)
        if not grant.admin:
            if not namespaces:
                return error(
                    403,
                    "forbidden",
                    "name the namespaces: a scoped key may consolidate only its own",
                )
            try:
                for ns in sorted(namespaces):
                    check(grant, ns)
            except AuthError as e:
                return error(e.status, e.code, e.message)
        states = self.handles.get("states")
        learning = self.handles.get("learning")
        if states is None or learning is None:
            return error(503, "no_agents", "this worker runs no agents")
        applying = bool(body.get("apply"))
        try:
            reports = await self._cycle(body, states, learning, namespaces, at)
        except Exception as e:
            # a dry run writes nothing, not even its own workflow observation
            for ns in (namespaces or ["*"]) if applying else []:
                await self.memory.observe(
                    ns if ns != "*" else "system", "consolidation", "failure", str(e)[:500]
                )
            raise
        for r in reports if applying else []:
            await self.memory.observe(
                r["namespace"],
                "consolidation",
                "success",
                f"{len(r['actions'])} actions, {'applied' if r['applied'] else 'dry run'}",
            )
        return json_response({"reports": reports})

    async def _cycle(
        self,
        body: dict[str, Any],
        states: Any,
        learning: Any,
        namespaces: set[str] | None,
        at: dt.datetime | None,
    ) -> Any:
        from memstream.streams.consolidation import run_cycle

        return await run_cycle(
            states.loaded(),
            self.settings,
            learning.sink,
            learning.memory_topic,
            namespaces=namespaces,
            at=at,
            apply=bool(body.get("apply")),
        )

    async def evolve(self, request: web.Request) -> web.Response:
        """Evolution candidates over this worker's partitions (evidence only unless apply)."""
        if (denied := self._admin(request)) is not None:
            return denied
        from memstream.streams.evolve import evolve

        body = await read_json(request) if request.can_read_body else {}
        namespaces = _namespaces(body)
        states, learning = self.handles.get("states"), self.handles.get("learning")
        if states is None or learning is None:
            return error(503, "no_agents", "this worker runs no agents")
        reports = await evolve(
            states.loaded(),
            self.settings,
            learning.sink,
            learning.memory_topic,
            namespaces=namespaces,
            apply=bool(body.get("apply")),
        )
        return json_response({"reports": reports})
