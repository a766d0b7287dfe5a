"""HTTP route of the relation graph: ``GET /v1/graph/{memory_id}?namespace=N&hops=2``
(optionally ``relation=causes``, ``as_of=...``, ``format=dot``): the memory's neighbourhood
and the typed edges among it (``projections/graph_queries.py``)."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from memstream.consumers.http_api import error, json_response
from memstream.consumers.http_memory import _time
from memstream.projections.graph_queries import indexed_neighbourhood, neighbourhood, to_dot
from memstream.schemas.errors import EventValidationError


class GraphRoutes:
    def __init__(self, memory: Any) -> None:
        self.memory = memory  # MemoryRoutes: auth and the DuckDB connection

    def register(self, app: web.Application) -> None:
        app.router.add_get("/v1/graph/{memory_id}", self.graph)

    async def graph(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            memory_id = request.match_info["memory_id"]
            raw_hops = request.query.get("hops", "2")
            try:
                hops = int(raw_hops)
            except ValueError:
                raise EventValidationError(
                    "bad_value", "hops must be a whole number", "hops"
                ) from None
            relation = request.query.get("relation") or None
            as_of = _time(request.query.get("as_of"), "as_of")
            duck = self.memory._duck()
            # the kept labels hold every memory of the namespace (as the table does)
            if not await asyncio.to_thread(duck.graph.labels, ns, [memory_id]):
                return error(404, "not_found", "no such memory in this namespace")
            if as_of is None:  # the live graph: walked over the kept adjacency
                graph = await asyncio.to_thread(
                    indexed_neighbourhood, duck.graph, ns, memory_id, hops,
                    relation=relation,
                )  # fmt: skip
            else:  # as it stood then: folded from the log's edge events
                graph = await asyncio.to_thread(
                    neighbourhood, duck.rows, ns, memory_id, hops, as_of=as_of, relation=relation
                )
            if request.query.get("format") == "dot":
                return web.Response(text=to_dot(memory_id, graph), content_type="text/vnd.graphviz")
            return json_response(
                {
                    "namespace": ns,
                    "memory_id": memory_id,
                    "hops": hops,
                    **({"relation": relation} if relation else {}),
                    **({"as_of": as_of.isoformat()} if as_of else {}),
                    **graph,
                }
            )

        response: web.Response = await self.memory._guard(request, run)
        return response
