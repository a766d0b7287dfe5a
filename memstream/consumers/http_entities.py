"""HTTP routes of the entity hub: ``GET /v1/entities?namespace=N`` (the namespace's entities
with their aliases and how often memories name them) and ``GET /v1/entities/{name}`` (every
memory about one entity, under any of its names, in event-time order: its timeline).
Grouping names into entities is pure (core/entity_hub.py); the rows come from the memory
projection, so the hub replays with the log."""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from memstream.consumers.http_api import json_response
from memstream.core.entity_hub import alias_groups, members

_COUNTS = (
    "SELECT e AS name, count(*) AS n FROM (SELECT unnest(entities) AS e FROM memories "
    "WHERE namespace = ? AND status = 'active') GROUP BY e"
)
_TIMELINE = (
    "SELECT memory_id, text, category, status, tier, coalesce(valid_from, created_at) AS happened_at, "
    "entities, superseded_by FROM memories WHERE namespace = ? AND "
    "(list_has_any(entities, ?::VARCHAR[]) OR regexp_matches(text, ?)) "
    "ORDER BY happened_at, memory_id LIMIT ?"
)


class EntityRoutes:
    def __init__(self, memory: Any) -> None:
        self.memory = memory  # MemoryRoutes: auth and the DuckDB query

    def register(self, app: web.Application) -> None:
        app.router.add_get("/v1/entities", self.entities)
        app.router.add_get("/v1/entities/{name}", self.entity)

    async def _counts(self, namespace: str) -> dict[str, int]:
        rows = await self.memory._query(_COUNTS, [namespace])
        return {str(r["name"]): int(r["n"]) for r in rows}

    async def entities(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            counts = await self._counts(ns)
            groups = alias_groups(counts)
            listed = sorted(
                (
                    {
                        "name": name,
                        "aliases": names[1:],
                        "memories": sum(counts[n] for n in names),
                    }
                    for name, names in groups.items()
                ),
                key=lambda e: (-int(e["memories"]), str(e["name"])),  # type: ignore[call-overload]
            )
            return json_response({"namespace": ns, "entities": listed})

        response: web.Response = await self.memory._guard(request, run)
        return response

    async def entity(self, request: web.Request) -> web.Response:
        async def run() -> web.Response:
            ns = self.memory._query_namespace(request)
            names = members(request.match_info["name"], await self._counts(ns))
            # a memory names the entity in its entity list, or at least in its text
            mention = r"\b(" + "|".join(re.escape(n) for n in names) + r")\b"
            rows = await self.memory._query(_TIMELINE, [ns, names, mention, 1000])
            for row in rows:
                at = row.pop("happened_at")
                row["at"] = at.isoformat() if at is not None else None
            return json_response(
                {"namespace": ns, "name": names[0], "aliases": names[1:], "timeline": rows}
            )

        response: web.Response = await self.memory._guard(request, run)
        return response
