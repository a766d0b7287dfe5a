"""Read-only SQL for users: one statement, a query, and no file or network access.

The statement type is checked by DuckDB's own parser (not a regex), and the connection
that runs user SQL has external access disabled and its configuration locked, so even a
SELECT cannot call ``read_csv``, ``read_parquet`` or an HTTP URL.

Each statement runs on a connection of its own (``Statement``), so it holds no lock that
other readers wait on, and can be interrupted from any thread: by a timer after
``sql_timeout_seconds``, or by the caller (an HTTP client that went away). DuckDB's memory
limit is the whole database's (``duckdb_memory_limit``): a query past it fails alone.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import duckdb

ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
_SIZE = re.compile(r"\d+(\.\d+)?\s*(B|[KMGT]i?B)", re.IGNORECASE)


class UserSQLError(ValueError):
    code = "bad_sql"


class SQLCancelled(UserSQLError):
    """The statement was interrupted: ``code`` says whether by the timeout or the caller."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class SQLOutOfMemory(UserSQLError):
    code = "sql_out_of_memory"


def check(sql: str) -> None:
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as e:
        raise UserSQLError(f"cannot parse: {e}") from None
    if len(statements) != 1:
        raise UserSQLError(f"exactly one statement, got {len(statements)}")
    if statements[0].type not in ALLOWED:
        raise UserSQLError(f"read-only: {statements[0].type.name} statements are not allowed")


def memory_limit_sql(limit: str) -> str:
    """``SET memory_limit`` for a size such as "1GB" (checked: it is spliced into SQL)."""
    if not _SIZE.fullmatch(limit.strip()):
        raise ValueError(
            f"duckdb_memory_limit: expected a size such as 1GB or 512MiB, got {limit!r}"
        )
    return f"SET memory_limit = '{limit.strip()}'"


def lock_down(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def run(
    con: duckdb.DuckDBPyConnection, sql: str, limit: int = 10_000, params: list[Any] | None = None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    check(sql)
    try:
        rel = con.execute(sql, params) if params else con.execute(sql)
        columns = [d[0] for d in rel.description or []]
        return columns, rel.fetchmany(limit)
    except duckdb.OutOfMemoryException as e:
        raise SQLOutOfMemory(
            f"the query needs more memory than DuckDB may use (duckdb_memory_limit): "
            f"{str(e).splitlines()[0]}"
        ) from None
    except duckdb.Error as e:
        raise UserSQLError(str(e).splitlines()[0]) from None


class Statement:
    """One user statement on its own connection (``con``, closed afterwards), interrupted
    after ``timeout`` seconds or when ``cancel`` is called from another thread."""

    def __init__(self, con: duckdb.DuckDBPyConnection, timeout: float | None) -> None:
        self.con = con
        self.timeout = timeout
        self.reason: str | None = None
        self.code = ""
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._done = False

    def cancel(self, reason: str, code: str = "sql_cancelled") -> None:
        with self._lock:
            if self._done or self.reason is not None:
                return
            self.reason, self.code = reason, code
            self.con.interrupt()

    def run(
        self, sql: str, limit: int = 10_000, params: list[Any] | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        timer = None
        if self.timeout:
            timer = threading.Timer(
                self.timeout,
                self.cancel,
                (f"the statement ran {self.timeout:g} s (sql_timeout_seconds) and was stopped",),
                {"code": "sql_timeout"},
            )
            timer.daemon = True
            timer.start()
        try:
            if self.reason is not None:  # cancelled before it started
                raise SQLCancelled(self.reason, self.code)
            try:
                return run(self.con, sql, limit, params)
            except UserSQLError:
                if self.reason is not None:  # the interrupt, not the query's fault
                    raise SQLCancelled(self.reason, self.code) from None
                raise
        finally:
            if timer is not None:
                timer.cancel()
            with self._lock:
                self._done = True
            self.con.close()

    @property
    def seconds(self) -> float:
        return time.monotonic() - self._started
