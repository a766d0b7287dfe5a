"""HTTP routes for what an agent puts into every prompt: ``POST /v1/context`` (hot memory,
the session's working set, the category tree and the recall for a question, within a token
budget) and
``GET /v1/memory.md`` (the namespace's MEMORY.md). The block itself is computed by pure
functions (core/hot_memory.py, core/context_block.py) from the memory projection."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

from aiohttp import web

from memstream.consumers.http_api import json_response, read_json
from memstream.core.context_block import assemble
from memstream.core.hot_memory import HotBlock, HotConfig, build_hot
from memstream.projections.tree_queries import TreeIndex, reader
from memstream.schemas.errors import EventValidationError

#: hot blocks kept (one per namespace and session asked about lately)
HOT_CACHED = 1024


class ContextRoutes:
    def __init__(self, memory: Any) -> None:
        self.memory = memory  # MemoryRoutes: auth, the DuckDB query, the recall service
        self.trees: TreeIndex | None = None
        # (namespace, session, byte cap) -> (projection version, block), least recent first
        self._hot: OrderedDict[tuple[str, str | None, int], tuple[tuple[str, int], HotBlock]] = (
            OrderedDict()
        )

    async def tree(self, namespace: str) -> str:
        """The namespace's category tree, rendered (kept until its memories change)."""
        if self.trees is None:
            duck = self.memory._duck()
            self.trees = TreeIndex(reader(duck), duck.memory_version, duck.mirror.tree_inputs)
        tree = await asyncio.to_thread(self.trees.tree, namespace)
        return tree.render()

    def register(self, app: web.Application) -> None:
        app.router.add_post("/v1/context", self.context)
        app.router.add_get("/v1/memory.md", self.memory_md)

    async def hot(self, namespace: str, session_id: str | None) -> HotBlock:
        # The block is a pure function of the namespace's rows (its "now" is their newest
        # event time, not the clock), so it is kept until the projection applies anything of
        # the namespace: an agent asking for context on every turn pays the queries only
        # after something changed.
        config = HotConfig(max_bytes=self.memory.settings.hot_max_bytes)
        key = (namespace, session_id, config.max_bytes)
        version = self.memory._duck().version(namespace)
        cached = self._hot.get(key)
        if cached is not None and cached[0] == version:
            self._hot.move_to_end(key)
            return cached[1]
        # the candidate rows as hot_queries.CANDIDATES selects them, kept by the projection
        rows, now = await asyncio.to_thread(self.memory._duck().hot_rows, namespace, session_id)
        block = build_hot(namespace, rows, now, config, session_id)
        self._hot[key] = (version, block)
        if len(self._hot) > HOT_CACHED:
            self._hot.popitem(last=False)
        return block

    async def context(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            body = await read_json(request)
            ns = body.get("namespace") or body.get("user_id") or ""
            if not isinstance(ns, str) or not ns:
                raise EventValidationError("missing_field", "the namespace to read", "namespace")
            self.memory.authorize(request, ns)
            budget = body.get("budget", 1000)
            if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
                raise EventValidationError("out_of_range", "a positive token count", "budget")
            session = body.get("session_id")
            if session is not None and not isinstance(session, str):
                raise EventValidationError("wrong_type", "a session id string", "session_id")
            query = body.get("query")
            if query is not None and (not isinstance(query, str) or not query.strip()):
                raise EventValidationError("wrong_type", "a question, or leave it out", "query")
            hot = await self.hot(ns, session)
            tree = await self.tree(ns)
            recalled: list[dict[str, Any]] = []
            query_id = None
            if query:
                service = self.memory.api.recall_service()
                if service is not None:
                    k = body.get("k", 10)
                    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 200:
                        raise EventValidationError("out_of_range", "1 to 200", "k")
                    result = (await service.recall(ns, query, k=k, session_id=session)).as_dict()
                    recalled, query_id = result["results"], result["query_id"]
            return json_response(assemble(hot, recalled, budget, query_id, tree).as_dict())

        response: web.Response = await self.memory._guard(request, run)
        return response

    async def memory_md(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            block = await self.hot(ns, request.query.get("session_id"))
            text = block.markdown()
            tree = await self.tree(ns)
            if tree.strip():  # where the rest is filed, as the context block shows it
                text = f"{text.rstrip()}\n\n## Category tree\n\n```\n{tree.rstrip()}\n```\n"
            return web.Response(text=text, content_type="text/markdown")

        response: web.Response = await self.memory._guard(request, run)
        return response
