"""Reading the analytics projection from the CLI: through the running worker's API when
there is one (the worker holds the DuckDB file), or straight from the file when not."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import duckdb
import httpx
import orjson

from memstream.consumers.worker_api import auth_headers, checked, refusal
from memstream.infra.settings import Settings
from memstream.projections.layout import Layout
from memstream.projections.user_sql import Statement, UserSQLError, lock_down, memory_limit_sql
from memstream.projections.user_sql import run as run_user_sql
from memstream.streams.status import running_worker

Result = tuple[list[str], list[tuple[Any, ...]]]


class Analytics(Protocol):
    def sql(self, query: str, params: list[Any] | None = None, limit: int = 10_000) -> Result: ...

    def close(self) -> None: ...


class LocalAnalytics:
    def __init__(
        self, path: Path, *, timeout: float | None = None, memory_limit: str | None = None
    ) -> None:
        """``timeout``: seconds a statement may run (None: unbounded)."""
        if not path.exists():
            raise FileNotFoundError(
                f"no analytics projection at {path}: run a worker or `memstream replay`"
            )
        self.con = duckdb.connect(str(path), read_only=True)
        if memory_limit:
            self.con.execute(memory_limit_sql(memory_limit))
        lock_down(self.con)
        self.timeout = timeout

    def sql(self, query: str, params: list[Any] | None = None, limit: int = 10_000) -> Result:
        if self.timeout is None:
            return run_user_sql(self.con, query, limit, params)
        return Statement(self.con.cursor(), self.timeout).run(query, limit, params)

    def close(self) -> None:
        self.con.close()


class RemoteAnalytics:
    def __init__(self, api_url: str, timeout: float = 60.0, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.client = httpx.Client(base_url=api_url, timeout=timeout, headers=auth_headers(api_key))

    def sql(self, query: str, params: list[Any] | None = None, limit: int = 10_000) -> Result:
        response = self.client.post(
            "/sql", content=orjson.dumps({"sql": query, "params": params, "limit": limit})
        )
        if (refused := refusal(response, self.api_key)) is not None:
            raise refused  # a key problem, not the query's
        body = response.json()
        if response.status_code != 200:
            raise UserSQLError(body.get("error", {}).get("message", response.text))
        return body["columns"], [tuple(r) for r in body["rows"]]

    def get(self, path: str, **params: str) -> Any:
        return checked(self.client.get(path, params=params), self.api_key)

    def close(self) -> None:
        self.client.close()


def open_analytics(settings: Settings, *, timeout: float | None = None) -> Analytics:
    """``timeout``: a bound on each statement read from the file here (a worker applies
    its own, ``sql_timeout_seconds``)."""
    worker = running_worker(settings.data_dir)
    if worker is not None:
        try:  # the recorded worker may be shutting down: ask before relying on it
            httpx.get(f"{worker['api_url']}/health", timeout=2.0).raise_for_status()
            return RemoteAnalytics(worker["api_url"], api_key=settings.api_key)
        except httpx.HTTPError:
            pass
    return LocalAnalytics(
        Layout(settings.data_path).duckdb(),
        timeout=timeout,
        memory_limit=settings.duckdb_memory_limit,
    )
