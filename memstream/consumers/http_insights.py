"""Namespace-scoped reports of the HTTP API: knowledge gaps, workflow health with its
evidence, the audit trail of a memory or a namespace as of a time, and what the caller's key
reaches. The admin route ``/sql`` sees every namespace; these answer for one, checked
against the caller's key like the memory routes, so a scoped key (and the MCP server
speaking for it) gets its own reports and nothing else."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from aiohttp import web

from memstream.consumers.auth import ALL, AuthError
from memstream.consumers.http_api import error, json_response
from memstream.consumers.http_memory import MemoryRoutes, _limit, _time
from memstream.core.metadata import KINDS
from memstream.projections.reports import (
    evidence_query,
    gaps_query,
    health_query,
    metadata_query,
    status_text,
    suggestions,
)
from memstream.schemas.errors import EventValidationError


class _Reader:
    """The audit functions' SQL port over the worker's read connection."""

    def __init__(self, duck: Any) -> None:
        self.duck = duck

    def sql(
        self, query: str, params: list[Any] | None = None, limit: int = 10_000
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        columns, rows = self.duck.user_query(query, limit, params)
        return list(columns), list(rows)


class InsightRoutes:
    def __init__(self, memory: MemoryRoutes) -> None:
        self.memory = memory

    def register(self, app: web.Application) -> None:
        r = app.router
        r.add_get("/v1/whoami", self.whoami)
        r.add_get("/v1/gaps", self.gaps)
        r.add_get("/v1/metadata", self.metadata)
        r.add_get("/v1/workflows/health", self.workflow_health)
        r.add_get("/v1/audit", self.audit_namespace)
        r.add_get("/v1/memories/{memory_id}/audit", self.audit_memory)

    async def whoami(self, request: web.Request) -> web.Response:
        """The namespaces the presented key reaches (["*"]: all of them)."""
        try:
            grant = self.memory.grant(request)
        except AuthError as e:
            return error(e.status, e.code, e.message)
        return json_response(
            {"namespaces": sorted(grant.namespaces), "admin": grant.admin, "all": ALL}
        )

    async def gaps(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            days = _limit(request.query.get("days"), 30, 3650)
            rows = await self.memory._query(*gaps_query(days, ns))
            return json_response({"namespace": ns, "days": days, "gaps": rows})

        return await self.memory._guard(request, run)

    async def metadata(self, request: web.Request) -> web.Response:
        """URLs, commands, paths, versions and ids kept on the namespace's memories:
        ``?kind=url`` for one kind, ``?contains=wiki`` for values holding a fragment."""

        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            kind = request.query.get("kind") or None
            if kind is not None and kind not in KINDS:
                raise EventValidationError("out_of_range", f"one of {', '.join(KINDS)}", "kind")
            contains = request.query.get("contains") or None
            limit = _limit(request.query.get("limit"), 100, 10_000)
            rows = await self.memory._query(*metadata_query(kind, ns, contains, limit))
            return json_response({"namespace": ns, "kind": kind, "results": rows})

        return await self.memory._guard(request, run)

    async def workflow_health(self, request: web.Request) -> web.Response:
        """Each workflow's health; with the unsuccessful runs behind it and what to do."""

        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            workflow = request.query.get("workflow") or None
            limit = _limit(request.query.get("limit"), 10, 1000)
            rows = await self.memory._query(*health_query(ns, workflow))
            for row in rows:
                evidence = await self.memory._query(*evidence_query(ns, row["workflow"], limit))
                row["verdict"] = status_text(row["status"])
                row["evidence"] = evidence
                row["suggestions"] = suggestions({e["outcome"] for e in evidence})
            if workflow and not rows:
                return error(404, "not_found", f"no observations of workflow {workflow!r} in {ns}")
            return json_response({"namespace": ns, "workflows": rows})

        return await self.memory._guard(request, run)

    async def audit_memory(self, request: web.Request) -> web.Response:
        """The causal chain of one memory: source turns, extraction, every decision."""
        from memstream.projections.audit import audit_memory

        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            memory_id = request.match_info["memory_id"]
            trail = await asyncio.to_thread(audit_memory, self._reader(), memory_id, ns)
            if not trail.steps:
                return error(404, "not_found", f"no events for memory {memory_id} in {ns}")
            return json_response(trail.as_dict())

        return await self.memory._guard(request, run)

    async def audit_namespace(self, request: web.Request) -> web.Response:
        """What the namespace knew at ``as_of`` (event time): its memories valid then."""
        from memstream.core.memory_state import to_json
        from memstream.projections.audit import as_of

        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            raw = request.query.get("as_of")
            if not raw:
                raise EventValidationError(
                    "missing_field", "?as_of=ISO 8601 time (with a UTC offset)", "as_of"
                )
            when = _time(raw, "as_of")
            assert isinstance(when, datetime)
            states = await asyncio.to_thread(as_of, self._reader(), ns, when)
            return json_response(
                {
                    "namespace": ns,
                    "as_of": when.isoformat(),
                    "memories": [to_json(s) for s in states],
                }
            )

        return await self.memory._guard(request, run)

    def _reader(self) -> _Reader:
        return _Reader(self.memory._duck())
