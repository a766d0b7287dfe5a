"""User statements on the real DuckDB projection: stopped by their timeout or by the caller,
failing alone past the memory limit, on a connection of their own."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstream.consumers.json_values import blob_text, jsonable
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.user_sql import (
    SQLCancelled,
    SQLOutOfMemory,
    UserSQLError,
    memory_limit_sql,
)

HEAVY = "SELECT count(*) FROM range(100000000000) a"
TOPICS = {"turns": "t.turns", "memory_log": "t.memory.log"}


@pytest.fixture
def duck(tmp_path: Path) -> Iterator[DuckDBProjection]:
    projection = DuckDBProjection(tmp_path / "v1.duckdb", TOPICS, memory_limit="64MB")
    yield projection
    projection.close()


def test_a_statement_past_its_timeout_is_stopped(duck: DuckDBProjection) -> None:
    started = time.monotonic()
    with pytest.raises(SQLCancelled) as stopped:
        duck.statement(0.5).run(HEAVY)
    assert stopped.value.code == "sql_timeout" and time.monotonic() - started < 10
    assert duck.statement(0.5).run("SELECT 1") == (["1"], [(1,)])


def test_a_statement_is_stopped_by_its_caller_and_holds_no_lock(duck: DuckDBProjection) -> None:
    statement = duck.statement(None)
    result: dict[str, BaseException] = {}

    def run() -> None:
        try:
            statement.run(HEAVY)
        except UserSQLError as e:
            result["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    # other readers go on meanwhile (the projection's own reader, another statement)
    assert duck.user_query("SELECT 2")[1] == [(2,)]
    assert duck.statement(5).run("SELECT 3")[1] == [(3,)]
    statement.cancel("the client went away")
    thread.join(10)
    error = result["error"]
    assert isinstance(error, SQLCancelled) and error.code == "sql_cancelled"
    assert str(error) == "the client went away"


def test_a_statement_past_the_memory_limit_fails_alone(duck: DuckDBProjection) -> None:
    with pytest.raises(SQLOutOfMemory, match="duckdb_memory_limit"):
        duck.statement(30).run("SELECT string_agg(x::VARCHAR, ',') FROM range(30000000) t(x)")
    limit = duck.statement(5).run("SELECT current_setting('memory_limit')")[1][0][0]
    assert limit == "61.0 MiB"  # 64 MB as DuckDB prints it
    assert duck.statement(5).run("SELECT 4")[1] == [(4,)]


def test_the_threads_setting_holds_for_the_whole_database(tmp_path: Path) -> None:
    projection = DuckDBProjection(tmp_path / "t.duckdb", TOPICS, threads=1)
    try:
        assert projection.statement(5.0).run("SELECT current_setting('threads')") == (
            ["current_setting('threads')"],
            [(1,)],
        )
    finally:
        projection.close()


def test_the_memory_limit_setting_is_a_size_and_nothing_else() -> None:
    assert memory_limit_sql("512MiB") == "SET memory_limit = '512MiB'"
    with pytest.raises(ValueError, match="duckdb_memory_limit"):
        memory_limit_sql("1GB'; DROP TABLE memories; --")


def test_values_json_cannot_hold_are_made_into_ones_it_can() -> None:
    assert jsonable([2**70, -(2**63), {"a": b"\x00z"}]) == [str(2**70), -(2**63), {"a": "\\x00z"}]
    assert blob_text(b"a\\b\xff") == "a\\x5Cb\\xFF"
