"""How the MCP server reaches the worker: its HTTP API, with the caller's key.

The worker is the authority on keys: every call carries the caller's key and the worker
checks it against the namespace, exactly as for any other HTTP client. Over stdio the caller
is the local user, so the key is the server's own (``mcp_api_key``, else the first key of
``api_keys`` as the CLI does); over HTTP it is the key the remote client presents, and the
server's own key is never lent to it.

The namespace of a call: the server's configured one (``mcp_namespace``) when set, and then
no other; else a tool's ``namespace`` argument; else the single namespace the caller's key
reaches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from memstream.consumers.client import MemstreamError, _checked
from memstream.infra.settings import Settings
from memstream.streams.status import running_worker

Transport = Literal["stdio", "http"]


class LinkError(Exception):
    """A call that cannot be made or was refused; the message is for the caller to read
    (``status``: the worker's HTTP status, 0 when it was never asked)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def choose_namespace(requested: str | None, pinned: str | None, reachable: list[str]) -> str:
    """The namespace one call acts on (``reachable``: what the key reaches, "*" for all)."""
    if pinned:
        if requested and requested != pinned:
            raise LinkError(
                f"this MCP server serves namespace {pinned!r} only (its configuration); "
                f"{requested!r} was asked for"
            )
        return pinned
    if requested:
        return requested
    named = sorted(n for n in reachable if n != "*")
    if len(named) == 1 and "*" not in reachable:
        return named[0]
    reach = "every namespace" if "*" in reachable else ", ".join(map(repr, named)) or "none"
    raise LinkError(
        f"name the namespace: pass namespace=... (this key reaches {reach}), "
        "or configure the server with MEMSTREAM_MCP_NAMESPACE / --namespace"
    )


def bearer(headers: Mapping[str, str] | None) -> str | None:
    """The API key an HTTP caller presented (Authorization: Bearer, or X-API-Key)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    auth = lowered.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return lowered.get("x-api-key") or None


def _answer(response: httpx.Response) -> Any:
    """The worker's JSON body, or its error as a LinkError naming status, code and field."""
    try:
        return _checked(response)
    except MemstreamError as e:
        where = f" (field {e.path})" if e.path else ""
        raise LinkError(f"{e.status} {e.code}: {e.message}{where}", e.status) from None


@dataclass(frozen=True, slots=True)
class Caller:
    key: str | None
    namespace: str  # resolved, not yet checked: the worker checks it against the key


class WorkerLink:
    def __init__(self, settings: Settings, transport: Transport, *, timeout: float = 60.0) -> None:
        self.settings = settings
        self.transport = transport
        self.timeout = timeout
        self.pinned = settings.mcp_namespace
        first = settings.api_keys.split(",")[0].split("=")[0] if settings.api_keys else None
        self.own_key = settings.mcp_api_key or settings.api_key or first
        self._client: httpx.AsyncClient | None = None
        self._reach: dict[str | None, list[str]] = {}

    def api_url(self) -> str:
        """The worker's API: configured, else the running worker of the data directory (looked
        up on every call, so a restarted worker on a new port is found)."""
        if self.settings.mcp_api_url:
            return self.settings.mcp_api_url.rstrip("/")
        worker = running_worker(self.settings.data_dir)
        if worker is None:
            raise LinkError(
                f"no running worker for data directory {self.settings.data_dir}: start "
                "`memstream worker`, or set MEMSTREAM_MCP_API_URL to its API address"
            )
        return str(worker["api_url"])

    def key_for(self, headers: Mapping[str, str] | None) -> str | None:
        return self.own_key if self.transport == "stdio" else bearer(headers)

    async def caller(self, headers: Mapping[str, str] | None, requested: str | None) -> Caller:
        key = self.key_for(headers)
        if self.pinned:
            return Caller(key, choose_namespace(requested, self.pinned, []))
        if requested:
            return Caller(key, requested)
        return Caller(key, choose_namespace(None, None, await self.reach(key)))

    async def reach(self, key: str | None) -> list[str]:
        """The namespaces a key reaches, as the worker says (cached per key)."""
        if key not in self._reach:
            body = await self.call("GET", "/v1/whoami", key)
            self._reach[key] = list(body["namespaces"])
        return self._reach[key]

    async def call(
        self,
        method: str,
        path: str,
        key: str | None,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
    ) -> Any:
        """One request to the worker: its JSON body, or LinkError with the worker's error."""
        return _answer(await self._send(method, path, key, params, json))

    async def text(
        self, path: str, key: str | None, *, params: Mapping[str, Any] | None = None
    ) -> str:
        """A GET that answers text (markdown), or LinkError with the worker's error."""
        response = await self._send("GET", path, key, params, None)
        if response.status_code >= 400:
            _answer(response)  # raises with the worker's JSON error
        return response.text

    async def _send(
        self,
        method: str,
        path: str,
        key: str | None,
        params: Mapping[str, Any] | None,
        json: Any,
    ) -> httpx.Response:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout)
        url = self.api_url() + path
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        query = {k: str(v) for k, v in (params or {}).items() if v is not None}
        try:
            return await self._client.request(method, url, headers=headers, params=query, json=json)
        except httpx.HTTPError as e:
            raise LinkError(
                f"the worker at {url} did not answer ({type(e).__name__}: {e}); is "
                "`memstream worker` running?"
            ) from None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
