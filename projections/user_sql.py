"""Read-only SQL for users: one statement, a query, and no file or network access.

The statement type is checked by DuckDB's own parser (not a regex), and the connection
that runs user SQL has external access disabled and its configuration locked, so even a
SELECT cannot call ``read_csv``, ``read_parquet`` or an HTTP URL.
"""

from __future__ import annotations

from typing import Any

import duckdb

ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}


class UserSQLError(ValueError):
    pass


def check(sql: str) -> None:
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as e:
        raise UserSQLError(f"cannot parse: {e}") from None
    if len(statements) != 1:
        raise UserSQLError(f"exactly one statement, got {len(statements)}")
    if statements[0].type not in ALLOWED:
        raise UserSQLError(f"read-only: {statements[0].type.name} statements are not allowed")


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
    except duckdb.Error as e:
        raise UserSQLError(str(e).splitlines()[0]) from None
