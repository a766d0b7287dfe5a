"""Who owns an id a caller names (a memory, a recall's query id), checked at the HTTP edge.

Feedback and edits name ids; an id no namespace has is answered 404 and one of another
namespace 403 before anything is published, so a typo or a foreign id is an error to the
caller instead of an event the agents can only dead-letter. Where an id is found, in order:
the recalls this worker served (feedback right after a search), the partition states of this
worker, the retrieval store (memories), the analytics projection (every namespace). The
projections trail the log by a moment, so a miss is looked up again for up to ``wait_s``.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

#: recalls remembered per worker for feedback on their query id
RECENT_QUERIES = 100_000


class UnknownId(Exception):
    """404 for an id no namespace has, 403 for one of another namespace."""

    def __init__(self, status: int, code: str, message: str, path: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.path = status, code, message, path


@dataclass(frozen=True, slots=True)
class IdKind:
    name: str  # "memory" | "recall"
    code: str  # error code of an unknown one


MEMORY = IdKind("memory", "unknown_memory")
QUERY = IdKind("recall", "unknown_query")


def verdict(
    kind: IdKind, ident: str, namespace: str, owners: Collection[str], path: str
) -> UnknownId | None:
    """None when ``namespace`` has the id; else the error for the caller."""
    if namespace in owners:
        return None
    if owners:
        return UnknownId(
            403, "forbidden", f"{kind.name} {ident!r} belongs to another namespace", path
        )
    return UnknownId(404, kind.code, f"no {kind.name} {ident!r} in namespace {namespace!r}", path)


class IdDirectory:
    def __init__(self, api: Any, wait_s: float = 2.0) -> None:
        self.api = api  # ApiService: .handles["states"], .projections
        self.wait_s = wait_s
        self.recent: OrderedDict[str, str] = OrderedDict()  # query_id -> namespace

    def note_query(self, namespace: str, query_id: str) -> None:
        """A recall this worker served (its MemoryAccessed is on its way to the projections)."""
        self.recent[query_id] = namespace
        self.recent.move_to_end(query_id)
        while len(self.recent) > RECENT_QUERIES:
            self.recent.popitem(last=False)

    async def check_memories(self, namespace: str, memory_ids: Sequence[str], path: str) -> None:
        for i, mid in enumerate(memory_ids):
            where = path if len(memory_ids) == 1 and path != "memory_ids" else f"{path}[{i}]"
            await self._check(MEMORY, mid, namespace, where)

    async def check_query(self, namespace: str, query_id: str, path: str = "query_id") -> None:
        await self._check(QUERY, query_id, namespace, path)

    async def _check(self, kind: IdKind, ident: str, namespace: str, path: str) -> None:
        if not self._can_look():
            return  # a worker without agents or projections cannot tell: the agents will
        deadline = asyncio.get_running_loop().time() + self.wait_s
        while True:
            owners = await self._owners(kind, ident, namespace)
            if owners or asyncio.get_running_loop().time() >= deadline:
                break
            await asyncio.sleep(0.2)  # the caller's request waits, never an agent
        error = verdict(kind, ident, namespace, owners, path)
        if error is not None:
            raise error

    async def holds(self, namespace: str, memory_id: str) -> bool:
        """Does ``namespace`` have the memory in this worker's states or retrieval store
        (which a read of the analytics projection may trail by a batch)?"""
        return namespace in await self._owners(MEMORY, memory_id, namespace)

    def _can_look(self) -> bool:
        proj = self.api.projections
        return bool(self.api.handles.get("states")) or (
            proj is not None and (proj.duckdb is not None or proj.qdrant is not None)
        )

    async def _owners(self, kind: IdKind, ident: str, namespace: str) -> set[str]:
        """Namespaces holding the id: the caller's alone as soon as it is found there."""
        if kind is QUERY and ident in self.recent:
            return {self.recent[ident]}
        states = self.api.handles.get("states")
        for state in states.loaded() if states is not None else ():
            if kind is QUERY and (namespace, ident) in state.recalls:
                return {namespace}
            memory = state.namespaces.get(namespace)
            if kind is MEMORY and memory is not None and ident in memory.states:
                return {namespace}
        proj = self.api.projections
        if proj is None:
            return set()
        if kind is MEMORY and proj.qdrant is not None:
            found = await asyncio.to_thread(proj.qdrant.store.get, namespace, [ident])
            if found:
                return {namespace}
        if proj.duckdb is None:
            return set()
        sql = (
            "SELECT DISTINCT namespace FROM memories WHERE memory_id = ?"
            if kind is MEMORY
            else "SELECT DISTINCT namespace FROM access WHERE query_id = ?"
        )
        _columns, rows = await asyncio.to_thread(proj.duckdb.user_query, sql, 1000, [ident])
        return {row[0] for row in rows}
