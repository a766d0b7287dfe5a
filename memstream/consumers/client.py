"""The Python SDK: a mem0-compatible surface over the memstream HTTP API.

``add`` is ack-first (returns event ids once the broker has them; extraction follows
asynchronously); ``update`` and ``delete`` are events too (nothing is physically lost);
``history`` reads the memory's events from the log. ``AsyncMemory`` has the same calls
with ``await``. Errors from the API raise ``MemstreamError`` with its code and message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import httpx

from memstream.infra.settings import Settings, load
from memstream.streams.status import running_worker

Messages = str | Sequence[Mapping[str, Any] | str]


class MemstreamError(RuntimeError):
    def __init__(self, status: int, code: str, message: str, path: str = "") -> None:
        super().__init__(f"{status} {code}: {message}" + (f" (at {path})" if path else ""))
        self.status, self.code, self.message, self.path = status, code, message, path


def _api_url(api_url: str | None, settings: Settings | None) -> str:
    if api_url:
        return api_url
    settings = settings or load()
    worker = running_worker(settings.data_dir)
    if worker is None:
        raise MemstreamError(
            0, "no_worker", "no running worker found: pass api_url=... or start `memstream worker`"
        )
    return str(worker["api_url"])


def _scope(user_id: str | None, agent_id: str | None, namespace: str | None) -> str:
    ns = namespace or user_id or agent_id
    if not ns:
        raise MemstreamError(0, "missing_namespace", "pass user_id=, agent_id= or namespace=")
    return ns


def _checked(response: httpx.Response) -> Any:
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.status_code >= 400:
        err = body.get("error", {}) if isinstance(body, dict) else {}
        raise MemstreamError(
            response.status_code,
            err.get("code", "http_error"),
            err.get("message", response.text),
            err.get("path", ""),
        )
    return body


def _as_dict(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


def _iso(at: datetime | None) -> str | None:
    return at.isoformat() if at else None


class _Requests:
    """The request bodies, shared by the sync and async clients."""

    @staticmethod
    def add(
        messages: Messages,
        ns: str,
        run_id: str | None,
        metadata: Mapping[str, Any] | None,
        occurred_at: datetime | None,
    ) -> dict[str, Any]:
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        # Anything that is not a mapping goes as it is: the API names what is wrong with it.
        return {
            "namespace": ns,
            "messages": [
                {"role": "user", "content": m} if isinstance(m, str) else _as_dict(m)
                for m in messages
            ],
            "run_id": run_id,
            "metadata": _as_dict(metadata or {}),
            "occurred_at": _iso(occurred_at),
        }

    @staticmethod
    def context(
        ns: str, query: str | None, session_id: str | None, budget: int, k: int
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"namespace": ns, "budget": budget, "k": k}
        if query is not None:
            body["query"] = query
        if session_id is not None:
            body["session_id"] = session_id
        return body

    @staticmethod
    def tree(ns: str, at: datetime | None) -> dict[str, str]:
        return {"namespace": ns, **({"at": at.isoformat()} if at is not None else {})}

    @staticmethod
    def tree_edit(
        ns: str, path: str, reason: str | None, occurred_at: datetime | None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"namespace": ns, "path": path}
        if reason is not None:
            body["reason"] = reason
        if occurred_at is not None:
            body["occurred_at"] = occurred_at.isoformat()
        return body

    @staticmethod
    def recall(query: str, ns: str, k: int, filters: Mapping[str, Any] | None) -> dict[str, Any]:
        f = dict(filters or {})
        as_of = f.pop("as_of", None)
        at = f.pop("at", None)  # the evaluation time (a replay's "now"); as_of cuts knowledge
        body = {
            "namespace": ns,
            "query": query,
            "k": k,
            "as_of": as_of.isoformat() if isinstance(as_of, datetime) else as_of,
            **({"at": at.isoformat() if isinstance(at, datetime) else at} if at else {}),
            "include_superseded": bool(f.pop("include_superseded", False)),
            "include_archived": bool(f.pop("include_archived", False)),
            # a low-confidence answer whole (else skipped: none, abbreviated: shortened)
            "include_low_confidence": bool(f.pop("include_low_confidence", False)),
            "session_id": f.pop("session_id", None) or f.pop("run_id", None),
        }
        if f:  # category / tier: the worker checks them and names any it does not know
            body["filters"] = f
        return body

    @staticmethod
    def feedback(
        target: str,
        outcome: str | None,
        namespace: str,
        reward: float | None,
        reason: str | None,
        correction: str | None,
        is_query: bool,
        query_id: str | None = None,
    ) -> dict[str, Any]:
        """A query id (``q-...``, or ``is_query``) targets a whole recall, else one memory;
        a memory with ``query_id``: that memory as an answer to that recall's question."""
        body: dict[str, Any] = {
            "namespace": namespace,
            "outcome": outcome,
            "reward": reward,
            "reason": reason,
            "correction": correction,
        }
        if is_query or target.startswith("q-"):
            body["query_id"] = target
        else:
            body["memory_ids"] = [target]
            if query_id:
                body["query_id"] = query_id
        return body


class Memory:
    """Synchronous client. ``Memory(api_url="http://127.0.0.1:8000", api_key="...")``; with no
    URL it finds the worker of this checkout's data directory."""

    def __init__(
        self,
        api_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        settings: Settings | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            base_url=_api_url(api_url, settings), headers=headers, timeout=timeout
        )

    def add(
        self,
        messages: Messages,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        namespace: str | None = None,
        occurred_at: datetime | None = None,
    ) -> dict[str, Any]:
        body = _Requests.add(
            messages, _scope(user_id, agent_id, namespace), run_id, metadata, occurred_at
        )
        return dict(_checked(self._http.post("/v1/memories", json=body)))

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        namespace: str | None = None,
        filters: Mapping[str, Any] | None = None,
        top_k: int = 10,
        limit: int | None = None,
    ) -> dict[str, Any]:
        body = _Requests.recall(
            query, _scope(user_id, agent_id, namespace), top_k if limit is None else limit, filters
        )
        return dict(_checked(self._http.post("/v1/memories/search", json=body)))

    def recall(
        self, query: str, *, namespace: str, k: int = 10, filters: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return dict(
            _checked(
                self._http.post("/v1/recall", json=_Requests.recall(query, namespace, k, filters))
            )
        )

    def context(
        self,
        *,
        namespace: str | None = None,
        user_id: str | None = None,
        query: str | None = None,
        session_id: str | None = None,
        budget: int = 1000,
        k: int = 10,
    ) -> dict[str, Any]:
        """What to put into the prompt: hot memory, the session's working set and the recall
        for ``query``, within ``budget`` tokens. ``text`` is ready for a system prompt;
        ``memory_ids`` (and ``query_id``) are what feedback can target."""
        body = _Requests.context(_scope(user_id, None, namespace), query, session_id, budget, k)
        return dict(_checked(self._http.post("/v1/context", json=body)))

    def entities(
        self, *, user_id: str | None = None, namespace: str | None = None
    ) -> dict[str, Any]:
        """The namespace's entities (people, places, things), with aliases and counts."""
        params = {"namespace": _scope(user_id, None, namespace)}
        return dict(_checked(self._http.get("/v1/entities", params=params)))

    def entity(
        self, name: str, *, user_id: str | None = None, namespace: str | None = None
    ) -> dict[str, Any]:
        """Everything about one entity, under any of its names, in event-time order."""
        params = {"namespace": _scope(user_id, None, namespace)}
        return dict(_checked(self._http.get(f"/v1/entities/{name}", params=params)))

    def graph(
        self,
        memory_id: str,
        *,
        hops: int = 2,
        relation: str | None = None,
        as_of: str | None = None,
        user_id: str | None = None,
        namespace: str | None = None,
    ) -> dict[str, Any]:
        """A memory's neighbourhood in the relation graph: ``nodes`` (with their depth) and
        the typed ``edges`` among them (causes, same_entity, supersedes, ...)."""
        params = {"namespace": _scope(user_id, None, namespace), "hops": str(hops)}
        if relation:
            params["relation"] = relation
        if as_of:
            params["as_of"] = as_of
        return dict(_checked(self._http.get(f"/v1/graph/{memory_id}", params=params)))

    def get(
        self, memory_id: str, *, user_id: str | None = None, namespace: str | None = None
    ) -> dict[str, Any]:
        ns = _scope(user_id, None, namespace)
        return dict(_checked(self._http.get(f"/v1/memories/{memory_id}", params={"namespace": ns})))

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        namespace: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 1000,
    ) -> dict[str, Any]:
        params = {
            "namespace": _scope(user_id, agent_id, namespace),
            "limit": str(limit),
            **{k: str(v) for k, v in (filters or {}).items()},
        }
        return dict(_checked(self._http.get("/v1/memories", params=params)))

    def update(
        self, memory_id: str, text: str, *, user_id: str | None = None, namespace: str | None = None
    ) -> dict[str, Any]:
        body = {"namespace": _scope(user_id, None, namespace), "text": text}
        return dict(_checked(self._http.put(f"/v1/memories/{memory_id}", json=body)))

    def delete(
        self, memory_id: str, *, user_id: str | None = None, namespace: str | None = None
    ) -> dict[str, Any]:
        params = {"namespace": _scope(user_id, None, namespace)}
        return dict(_checked(self._http.delete(f"/v1/memories/{memory_id}", params=params)))

    def pin(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        namespace: str | None = None,
        lock: bool = False,
        reason: str | None = None,
    ) -> dict[str, Any]:
        """Pin a memory (never forgotten, ranked a little higher); ``lock=True`` also makes
        it immutable (no rule and no extraction changes it). An event, like every edit."""
        body = {"namespace": _scope(user_id, None, namespace), "reason": reason}
        action = "lock" if lock else "pin"
        return dict(_checked(self._http.post(f"/v1/memories/{memory_id}/{action}", json=body)))

    def tree(
        self,
        *,
        user_id: str | None = None,
        namespace: str | None = None,
        at: datetime | None = None,
    ) -> dict[str, Any]:
        """The namespace's category tree: ``text`` (as the context call shows it), ``nodes``
        (path, count, last use, user-added), what the 60-day idle rule and the bounds left
        out (``pruned``, ``trimmed``); ``at``: judged at that event time instead of now."""
        params = _Requests.tree(_scope(user_id, None, namespace), at)
        return dict(_checked(self._http.get("/v1/tree", params=params)))

    def tree_add(
        self,
        path: str,
        *,
        user_id: str | None = None,
        namespace: str | None = None,
        reason: str | None = None,
        occurred_at: datetime | None = None,
    ) -> dict[str, Any]:
        """Add a node (``work/projects/budget-tracker``): memories about the entity its last
        segment names are placed under it. An event (TreeNodeAdded), like every edit."""
        return self._edit_tree("POST", path, _scope(user_id, None, namespace), reason, occurred_at)

    def tree_remove(
        self,
        path: str,
        *,
        user_id: str | None = None,
        namespace: str | None = None,
        reason: str | None = None,
        occurred_at: datetime | None = None,
    ) -> dict[str, Any]:
        """Remove a node and what is below it (TreeNodeRemoved); adding it again restores it."""
        return self._edit_tree(
            "DELETE", path, _scope(user_id, None, namespace), reason, occurred_at
        )

    def _edit_tree(
        self, method: str, path: str, ns: str, reason: str | None, occurred_at: datetime | None
    ) -> dict[str, Any]:
        body = _Requests.tree_edit(ns, path, reason, occurred_at)
        return dict(_checked(self._http.request(method, "/v1/tree", json=body)))

    def unpin(
        self, memory_id: str, *, user_id: str | None = None, namespace: str | None = None
    ) -> dict[str, Any]:
        body = {"namespace": _scope(user_id, None, namespace)}
        return dict(_checked(self._http.post(f"/v1/memories/{memory_id}/unpin", json=body)))

    def history(
        self, memory_id: str, *, user_id: str | None = None, namespace: str | None = None
    ) -> list[dict[str, Any]]:
        params = {"namespace": _scope(user_id, None, namespace)}
        return list(
            _checked(self._http.get(f"/v1/memories/{memory_id}/history", params=params))["events"]
        )

    def feedback(
        self,
        target: str,
        outcome: str | None = None,
        *,
        namespace: str,
        reward: float | None = None,
        reason: str | None = None,
        correction: str | None = None,
        is_query: bool = False,
        query_id: str | None = None,
    ) -> dict[str, Any]:
        """``target`` is a memory id, or a recall's query id with ``is_query=True``. A memory
        id with the ``query_id`` of the recall that returned it scopes the feedback to that
        question: a negative then sinks the memory for that question (and ones worded nearly
        the same) much further than for others (core/scoped_feedback.py)."""
        body = _Requests.feedback(
            target, outcome, namespace, reward, reason, correction, is_query, query_id
        )
        return dict(_checked(self._http.post("/v1/feedback", json=body)))

    def metadata(
        self, *, namespace: str, kind: str | None = None, contains: str | None = None
    ) -> list[dict[str, Any]]:
        """URLs, commands, paths, versions and ids kept on the namespace's memories (one row
        per value: memory_id, kind, value, text)."""
        params = {
            k: v for k, v in (("namespace", namespace), ("kind", kind), ("contains", contains)) if v
        }
        return list(_checked(self._http.get("/v1/metadata", params=params))["results"])

    def observe(
        self, workflow: str, outcome: str, *, namespace: str, detail: str | None = None
    ) -> dict[str, Any]:
        body = {"namespace": namespace, "workflow": workflow, "outcome": outcome, "detail": detail}
        return dict(_checked(self._http.post("/v1/workflows", json=body)))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMemory:
    """The same calls as ``Memory``, with ``await``."""

    def __init__(
        self,
        api_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        settings: Settings | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=_api_url(api_url, settings), headers=headers, timeout=timeout
        )

    async def add(
        self,
        messages: Messages,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        namespace: str | None = None,
        occurred_at: datetime | None = None,
    ) -> dict[str, Any]:
        body = _Requests.add(
            messages, _scope(user_id, agent_id, namespace), run_id, metadata, occurred_at
        )
        return dict(_checked(await self._http.post("/v1/memories", json=body)))

    async def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        namespace: str | None = None,
        filters: Mapping[str, Any] | None = None,
        top_k: int = 10,
    ) -> dict[str, Any]:
        body = _Requests.recall(query, _scope(user_id, agent_id, namespace), top_k, filters)
        return dict(_checked(await self._http.post("/v1/memories/search", json=body)))

    async def recall(
        self, query: str, *, namespace: str, k: int = 10, filters: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        body = _Requests.recall(query, namespace, k, filters)
        return dict(_checked(await self._http.post("/v1/recall", json=body)))

    async def context(
        self,
        *,
        namespace: str | None = None,
        user_id: str | None = None,
        query: str | None = None,
        session_id: str | None = None,
        budget: int = 1000,
        k: int = 10,
    ) -> dict[str, Any]:
        body = _Requests.context(_scope(user_id, None, namespace), query, session_id, budget, k)
        return dict(_checked(await self._http.post("/v1/context", json=body)))

    async def get(
        self, memory_id: str, *, user_id: str | None = None, namespace: str | None = None
    ) -> dict[str, Any]:
        ns = _scope(user_id, None, namespace)
        return dict(
            _checked(await self._http.get(f"/v1/memories/{memory_id}", params={"namespace": ns}))
        )

    async def get_all(
        self, *, user_id: str | None = None, namespace: str | None = None, limit: int = 1000
    ) -> dict[str, Any]:
        params = {"namespace": _scope(user_id, None, namespace), "limit": str(limit)}
        return dict(_checked(await self._http.get("/v1/memories", params=params)))

    async def update(self, memory_id: str, text: str, *, namespace: str) -> dict[str, Any]:
        body = {"namespace": namespace, "text": text}
        return dict(_checked(await self._http.put(f"/v1/memories/{memory_id}", json=body)))

    async def delete(self, memory_id: str, *, namespace: str) -> dict[str, Any]:
        return dict(
            _checked(
                await self._http.delete(
                    f"/v1/memories/{memory_id}", params={"namespace": namespace}
                )
            )
        )

    async def graph(
        self, memory_id: str, *, namespace: str, hops: int = 2, relation: str | None = None
    ) -> dict[str, Any]:
        """A memory's neighbourhood in the relation graph (see ``Memory.graph``)."""
        params = {"namespace": namespace, "hops": str(hops)}
        if relation:
            params["relation"] = relation
        return dict(_checked(await self._http.get(f"/v1/graph/{memory_id}", params=params)))

    async def tree(self, *, namespace: str, at: datetime | None = None) -> dict[str, Any]:
        """The namespace's category tree (see ``Memory.tree``)."""
        params = _Requests.tree(namespace, at)
        return dict(_checked(await self._http.get("/v1/tree", params=params)))

    async def tree_add(
        self, path: str, *, namespace: str, reason: str | None = None
    ) -> dict[str, Any]:
        body = _Requests.tree_edit(namespace, path, reason, None)
        return dict(_checked(await self._http.post("/v1/tree", json=body)))

    async def tree_remove(
        self, path: str, *, namespace: str, reason: str | None = None
    ) -> dict[str, Any]:
        body = _Requests.tree_edit(namespace, path, reason, None)
        return dict(_checked(await self._http.request("DELETE", "/v1/tree", json=body)))

    async def entity(self, name: str, *, namespace: str) -> dict[str, Any]:
        """Everything about one entity, under any of its names, in event-time order."""
        params = {"namespace": namespace}
        return dict(_checked(await self._http.get(f"/v1/entities/{name}", params=params)))

    async def history(self, memory_id: str, *, namespace: str) -> list[dict[str, Any]]:
        response = await self._http.get(
            f"/v1/memories/{memory_id}/history", params={"namespace": namespace}
        )
        return list(_checked(response)["events"])

    async def feedback(
        self,
        target: str,
        outcome: str | None = None,
        *,
        namespace: str,
        reward: float | None = None,
        reason: str | None = None,
        is_query: bool = False,
        query_id: str | None = None,
    ) -> dict[str, Any]:
        body = _Requests.feedback(
            target, outcome, namespace, reward, reason, None, is_query, query_id
        )
        return dict(_checked(await self._http.post("/v1/feedback", json=body)))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
