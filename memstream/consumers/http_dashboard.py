"""The web dashboard: read-only pages under ``/ui`` served by the worker.

The pages are static files (``consumers/static/dashboard``, uPlot vendored with its licence:
no CDN at run time); their data comes from ``/ui/api/...``, answered for one namespace and
checked against the caller's key exactly like the memory routes, so a key scoped to one
namespace sees that namespace and nothing else. The browser sends the key it was opened
with (``/ui/?key=...``) as ``Authorization: Bearer``. The SQL is in
``projections/dashboard_queries.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from memstream.consumers.auth import AuthError
from memstream.consumers.http_api import error, json_response
from memstream.consumers.http_memory import MemoryRoutes
from memstream.projections import dashboard_queries as q

STATIC = Path(__file__).parent / "static"
_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".txt": "text/plain"}


class DashboardRoutes:
    def __init__(self, memory: MemoryRoutes) -> None:
        self.memory = memory

    def register(self, app: web.Application) -> None:
        r = app.router
        r.add_get("/ui", self.index)
        r.add_get("/ui/", self.index)
        r.add_get("/ui/static/{path:.+}", self.static)
        r.add_get("/ui/api/namespaces", self.namespaces)
        r.add_get("/ui/api/overview", self.overview)
        r.add_get("/ui/api/memories", self.memories)
        r.add_get("/ui/api/learning", self.learning)
        r.add_get("/ui/api/evolution", self.evolution)
        r.add_get("/ui/api/memory/{memory_id}", self.memory_timeline)

    # --- static files: no data in them, so no key needed -------------------------------

    async def index(self, request: web.Request) -> web.StreamResponse:
        return self._file(STATIC / "dashboard" / "index.html")

    async def static(self, request: web.Request) -> web.StreamResponse:
        path = (STATIC / request.match_info["path"]).resolve()
        if not path.is_relative_to(STATIC.resolve()) or not path.is_file():
            return error(404, "not_found", "no such file")
        return self._file(path)

    @staticmethod
    def _file(path: Path) -> web.StreamResponse:
        kind = _TYPES.get(path.suffix, "application/octet-stream")
        return web.Response(
            body=path.read_bytes(),
            content_type=kind,
            charset="utf-8" if kind.startswith("text/") else None,
            headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
        )

    # --- data --------------------------------------------------------------------------

    async def namespaces(self, request: web.Request) -> web.Response:
        """The namespaces the key reaches that hold memories (a scoped key: its own, even
        before they hold any)."""
        try:
            grant = self.memory.grant(request)
        except AuthError as e:
            return error(e.status, e.code, e.message)

        async def run() -> web.Response:
            known = [r["namespace"] for r in await self.memory._query(*q.namespaces())]
            if grant.admin:
                names = known
            else:
                names = sorted(grant.namespaces | {n for n in known if grant.allows(n)})
            return json_response({"namespaces": names, "admin": grant.admin})

        return await self.memory._guard(request, run)

    async def overview(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            admin = self.memory.grant(request).admin
            api = self.memory.api
            health = await api.health(request)
            body: dict[str, Any] = {
                "namespace": ns,
                "per_minute": await self.memory._query(*q.events_per_minute(ns)),
                "totals": await self.memory._query(*q.totals(ns)),
                "dead_letters": (await self.memory._query(*q.dead_letters(None if admin else ns)))[
                    0
                ]["dead_letters"],
                "dead_letters_scope": "all namespaces" if admin else ns,
                "health": _json_of(health),
            }
            return json_response(body)

        return await self.memory._guard(request, run)

    async def memories(self, request: web.Request) -> web.Response:
        return await self._answer(
            request,
            decisions=q.decisions_per_day,
            moves=q.counts_over_time,
            by_status_and_tier=q.by_status_and_tier,
            recent=q.recent_memories,
        )

    async def learning(self, request: web.Request) -> web.Response:
        return await self._answer(request, histogram=q.q_histogram, per_day=q.q_per_day)

    async def evolution(self, request: web.Request) -> web.Response:
        return await self._answer(request, candidates=q.evolution)

    async def _answer(
        self, request: web.Request, **queries: Callable[[str], q.Query]
    ) -> web.Response:
        """The rows of each query for the request's namespace, under the query's name."""

        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            body: dict[str, Any] = {"namespace": ns}
            for name, build in queries.items():
                body[name] = await self.memory._query(*build(ns))
            return json_response(body)

        return await self.memory._guard(request, run)

    async def memory_timeline(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            memory_id = request.match_info["memory_id"]
            events = await self.memory._query(*q.memory_events(ns, memory_id))
            if not events:
                return error(404, "unknown_memory", f"no memory {memory_id!r} in {ns!r}")
            return json_response({"namespace": ns, "memory_id": memory_id, "events": events})

        return await self.memory._guard(request, run)


def _json_of(response: web.Response) -> Any:
    import orjson

    return orjson.loads(response.body) if isinstance(response.body, bytes) else {}
