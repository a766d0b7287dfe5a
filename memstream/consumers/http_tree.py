"""HTTP routes of the category tree: ``GET /v1/tree`` (the namespace's tree, or as the idle
rule would leave it at ``at``), ``POST /v1/tree`` (add a node) and ``DELETE /v1/tree``
(remove one). Edits are events (``TreeEdit`` on the feedback topic, turned into
``TreeNodeAdded`` / ``TreeNodeRemoved`` on the memory log); the tree is computed from the
analytics projection (projections/tree_queries.py, core/category_tree.py)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from aiohttp import web

from memstream.consumers.http_api import json_response, read_json
from memstream.consumers.http_memory import _time
from memstream.core.category_tree import CategoryTree, TreeConfig, normalize_path
from memstream.core.event_time import event_time_error
from memstream.projections.tree_queries import load_tree, reader
from memstream.schemas._fields import utc_now
from memstream.schemas.envelope import NAMESPACE_RE, make_event
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import TreeEdit


def tree_path(value: Any, field: str = "path") -> str:
    """A caller's path, normalised (``Work/Budget Tracker`` -> ``work/budget-tracker``), or
    the error naming the field."""
    if not isinstance(value, str) or not value.strip():
        raise EventValidationError("missing_field", "a tree path such as work/projects", field)
    try:
        return normalize_path(value)
    except ValueError as e:
        raise EventValidationError("bad_value", str(e), field) from None


class TreeRoutes:
    def __init__(self, memory: Any) -> None:
        self.memory = memory  # MemoryRoutes: auth, the DuckDB query, the publisher

    def register(self, app: web.Application) -> None:
        app.router.add_get("/v1/tree", self.show)
        app.router.add_post("/v1/tree", self.add)
        app.router.add_delete("/v1/tree", self.remove)

    async def tree(self, namespace: str, at: datetime | None = None) -> CategoryTree:
        duck = self.memory._duck()
        return await asyncio.to_thread(load_tree, reader(duck), namespace, TreeConfig(), at)

    async def show(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            at = _time(request.query.get("at"), "at")
            tree = await self.tree(ns, at)
            if request.query.get("format") == "text":
                return web.Response(text=tree.render(), content_type="text/plain")
            return json_response(tree.as_dict())

        response: web.Response = await self.memory._guard(request, run)
        return response

    async def add(self, request: web.Request) -> web.Response:
        return await self._edit(request, "add")

    async def remove(self, request: web.Request) -> web.Response:
        return await self._edit(request, "remove")

    async def _edit(self, request: web.Request, action: str) -> web.Response:
        async def run() -> web.Response:
            body = await read_json(request) if request.can_read_body else {}
            ns = request.query.get("namespace") or body.get("namespace") or body.get("user_id")
            if not isinstance(ns, str) or not ns:
                raise EventValidationError("missing_field", "the namespace", "namespace")
            if not NAMESPACE_RE.fullmatch(ns):
                raise EventValidationError("bad_namespace", "not a namespace name", "namespace")
            self.memory.authorize(request, ns)
            path = tree_path(body.get("path", request.query.get("path")))
            at = _time(body.get("occurred_at"), "occurred_at")
            if at is not None and (
                late := event_time_error(
                    at, intake=utc_now(), skew=self.memory.settings.max_future_skew
                )
            ):
                raise late
            reason = body.get("reason")
            env = make_event(
                TreeEdit(action=action, path=path, reason=reason),  # type: ignore[arg-type]
                namespace=ns,
                occurred_at=at,
                producer="memstream-http",
                limits=self.memory.settings.limits,
            )
            event_id = await self.memory._publisher().publish(env)
            return json_response(
                {"event_id": event_id, "action": action, "path": path, "status": "queued"}
            )

        response: web.Response = await self.memory._guard(request, run)
        return response
