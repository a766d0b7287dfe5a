"""The analytics projection without a broker: idempotence, positions, the fold, views, user SQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstream.core.memory_state import fold
from memstream.infra.topics import topic_names
from memstream.projections.duckdb_projection import DuckDBProjection, diff_digests, state_from_row
from memstream.projections.port import LogRecord
from memstream.projections.user_sql import UserSQLError
from memstream.schemas import AccessedMemory, MemoryAccessed, WorkflowObserved, encode, make_event
from tests.unit.test_write_plan import SCRIPT, run

TOPICS = topic_names("t")
T0 = datetime(2024, 3, 1, tzinfo=UTC)


def records(events: list[Any], topic: str = "t.memory.log", start: int = 0) -> list[LogRecord]:
    return [LogRecord(topic, 0, start + i, b"ns", encode(e)) for i, e in enumerate(events)]


@pytest.fixture
def proj() -> Any:
    p = DuckDBProjection(":memory:", TOPICS)
    yield p
    p.close()


def test_fold_matches_the_reducer_and_repeats_change_nothing(proj: DuckDBProjection) -> None:
    _memory, log = run(SCRIPT)
    first = proj.apply(records(log))
    assert first.applied == len(log) and first.duplicates == 0
    before = proj.digest()
    again = proj.apply(records(log))  # the same records delivered again
    assert again.applied == 0 and again.duplicates == len(log)
    moved = proj.apply(records(log, start=100))  # the same events republished at new offsets
    assert moved.applied == 0
    after = proj.digest()
    assert diff_digests(before, after) == []
    assert after.positions == {("t.memory.log", 0): 100 + len(log)}
    cols, rows = proj.user_query("SELECT * FROM memories ORDER BY memory_id")
    states = {
        r[cols.index("memory_id")]: state_from_row(dict(zip(cols, r, strict=True))) for r in rows
    }
    assert states == fold(log)


def test_batch_boundaries_do_not_matter() -> None:
    _memory, log = run(SCRIPT)
    whole, split = DuckDBProjection(":memory:", TOPICS), DuckDBProjection(":memory:", TOPICS)
    whole.apply(records(log))
    for i in range(len(log)):
        split.apply(records(log[i : i + 1], start=i))
    assert diff_digests(whole.digest(), split.digest()) == []
    # the hot memory blocks are part of the digest (memstream verify compares them)
    blocks = whole.digest().tables["hot_blocks"]
    assert blocks and blocks == split.digest().tables["hot_blocks"]


def test_positions_only_move_forward(proj: DuckDBProjection) -> None:
    _memory, log = run(SCRIPT[:2])
    proj.apply(records(log, start=10))
    proj.apply(records(log[:1], start=3))
    assert proj.positions()[("t.memory.log", 0)] == 10 + len(log)


def test_bad_records_are_kept_as_rejects(proj: DuckDBProjection) -> None:
    stats = proj.apply([LogRecord("t.turns", 1, 7, b"ns", b"{nope")])
    assert stats.rejected == 1
    _cols, rows = proj.user_query(
        "SELECT topic, log_partition, log_offset, original FROM projection_rejects"
    )
    assert rows == [("t.turns", 1, 7, b"{nope")]


def _access(ns: str, query: str, score: float, at: datetime, i: int) -> Any:
    payload = MemoryAccessed(
        query_id=f"q{i}",
        query=query,
        top_score=score,
        memories=[AccessedMemory(memory_id="m1", rank=1, score=score)],
    )
    return make_event(payload, namespace=ns, occurred_at=at)


def test_gap_report_finds_poorly_answered_topics(proj: DuckDBProjection) -> None:
    events = [
        _access("acme", "how do we rotate kafka keys", 0.1, T0 + timedelta(days=i), i)
        for i in range(4)
    ]
    events += [_access("acme", "kafka key rotation?", 0.2, T0 + timedelta(days=5), 9)]
    events += [
        _access("acme", "where is the office", 0.9, T0 + timedelta(days=i), 20 + i)
        for i in range(5)
    ]
    events += [_access("acme", "old question about kafka keys", 0.0, T0 - timedelta(days=60), 40)]
    proj.apply(records(events, topic="t.access"))
    _cols, rows = proj.user_query(
        "SELECT namespace, topic, searches, avg_top_score FROM gap_report"
    )
    assert rows == [("acme", "kafka key", 5, 0.12)]  # the 60-day-old search is outside the window
    _c, usage = proj.user_query("SELECT access_count FROM memory_usage WHERE memory_id = 'm1'")
    assert usage == [(11,)]


def test_workflow_health_and_evidence(proj: DuckDBProjection) -> None:
    outcomes = ["success", "failure", "failure", "corrected", "success"]
    events = [
        make_event(
            WorkflowObserved(workflow="recall", outcome=o, detail=f"run {i}"),
            namespace="acme",
            occurred_at=T0 + timedelta(days=i),
        )
        for i, o in enumerate(outcomes)
    ]
    events.append(
        make_event(
            WorkflowObserved(workflow="ingest", outcome="success"),
            namespace="acme",
            occurred_at=T0 + timedelta(days=4),
        )
    )
    proj.apply(records(events, topic="t.workflows"))
    _c, rows = proj.user_query(
        "SELECT workflow, status, failure_7d, success_rate_7d FROM workflow_health"
    )
    # one observation is too few to call a workflow healthy (or degraded)
    assert rows == [("ingest", "insufficient", 0, 1.0), ("recall", "degraded", 2, 0.4)]
    _c, evidence = proj.user_query("SELECT workflow, outcome FROM workflow_evidence")
    assert sorted(evidence) == [
        ("recall", "corrected"),
        ("recall", "failure"),
        ("recall", "failure"),
    ]


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM memories",
        "SELECT 1; SELECT 2",
        "SELECT * FROM read_csv('/etc/passwd')",
        "COPY memories TO '/tmp/out.csv'",
        "ATTACH '/tmp/other.db'",
        "SET enable_external_access = true",
        "SELECT * FROM read_parquet('http://127.0.0.1:1/x.parquet')",
        "INSTALL httpfs",
        "CREATE TABLE x (a INT)",
    ],
)
def test_user_sql_is_read_only_and_offline(proj: DuckDBProjection, sql: str) -> None:
    with pytest.raises(UserSQLError):
        proj.user_query(sql)


def test_events_on_the_wrong_topic_are_rejects_not_crashes(proj: DuckDBProjection) -> None:
    wrong = make_event(WorkflowObserved(workflow="w", outcome="success"), namespace="acme")
    stats = proj.apply([LogRecord("t.turns", 0, 0, b"acme", encode(wrong))])
    assert stats.rejected == 1
    _c, rows = proj.user_query("SELECT reason FROM projection_rejects")
    assert "wrong_topic" in rows[0][0]


def test_a_namespace_version_moves_with_what_is_applied_of_it() -> None:
    import asyncio

    from memstream.consumers.http_context import ContextRoutes
    from memstream.infra.settings import Settings

    _memory, log = run(SCRIPT)
    proj = DuckDBProjection(":memory:", TOPICS)

    class Memory:  # what the context routes read of the HTTP memory routes
        settings = Settings()

        def _duck(self) -> DuckDBProjection:
            return proj

        async def _query(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
            return proj.rows(sql, params)

    routes = ContextRoutes(Memory())
    try:
        ns = log[0].namespace
        half = len(log) // 2
        proj.apply(records(log[:half]))
        first = proj.version(ns)
        block = asyncio.run(routes.hot(ns, None))
        assert asyncio.run(routes.hot(ns, None)) is block  # nothing applied: the kept block
        assert proj.version("another") == (first[0], 0)
        proj.apply(records(log[half:], start=half))
        assert proj.version(ns) != first
        again = asyncio.run(routes.hot(ns, None))
        assert again is not block
        fresh = DuckDBProjection(":memory:", TOPICS)  # a rebuilt projection never matches
        fresh.apply(records(log))
        assert fresh.version(ns)[0] != proj.version(ns)[0]
        fresh.close()
    finally:
        proj.close()


def test_a_memory_id_reused_in_another_namespace_stays_apart(proj: DuckDBProjection) -> None:
    """Ids are minted unique, but a producer on the Kafka door can reuse one in another
    namespace: folding either leaves the other's row as it was (the fold looks rows up and
    deletes them by id through an index, then by namespace and id)."""
    from memstream.core.hashing import content_hash
    from memstream.schemas.events import MemoryCreated, MemoryReinforced

    def created(ns: str, text: str, at: int) -> Any:
        return make_event(
            MemoryCreated(
                memory_id="m-1", text=text, category="fact", content_hash=content_hash(ns, text)
            ),
            namespace=ns,
            occurred_at=T0 + timedelta(minutes=at),
        )

    a, b = created("tenant-a", "likes tea", 0), created("tenant-b", "likes coffee", 1)
    again = make_event(
        MemoryReinforced(memory_id="m-1", stability_before=1.0, stability_after=2.0, reason="x"),
        namespace="tenant-b",
        occurred_at=T0 + timedelta(minutes=2),
    )
    for i, event in enumerate((a, b, again)):  # one batch each: every fold looks rows up
        proj.apply(records([event], start=i))
    assert proj.memory("tenant-a", "m-1") == fold([a])["m-1"]
    assert proj.memory("tenant-b", "m-1") == fold([b, again])["m-1"]
    _cols, rows = proj.user_query("SELECT namespace, text, stability FROM memories ORDER BY 1")
    assert rows == [("tenant-a", "likes tea", 1.0), ("tenant-b", "likes coffee", 2.0)]
