"""Every dashboard query runs on a real DuckDB projection fed by the write plan's events,
answers for its namespace only, and gives the charts epoch-second x values."""

from __future__ import annotations

from typing import Any

from memstream.infra.topics import topic_names
from memstream.projections import dashboard_queries as q
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.port import LogRecord
from memstream.schemas import encode
from tests.unit.test_write_plan import SCRIPT, run

TOPICS = topic_names("t")


def _projection() -> DuckDBProjection:
    proj = DuckDBProjection(":memory:", TOPICS)
    _, log = run(SCRIPT)
    proj.apply([LogRecord("t.memory.log", 0, i, b"ns", encode(e)) for i, e in enumerate(log)])
    return proj


def _rows(proj: DuckDBProjection, query: tuple[str, list[Any]]) -> list[dict[str, Any]]:
    columns, rows = proj.user_query(*query[:1], 10_000, query[1])
    return [dict(zip(columns, r, strict=True)) for r in rows]


def test_each_query_runs_and_keeps_to_its_namespace() -> None:
    proj = _projection()
    try:
        decisions = _rows(proj, q.decisions_per_day("ns"))
        assert decisions and all(isinstance(r["at"], int) for r in decisions)
        assert {r["type"] for r in decisions} >= {"MemoryCreated"}
        assert _rows(proj, q.decisions_per_day("other")) == []
        moves = _rows(proj, q.counts_over_time("ns"))
        active = sum(r["delta"] for r in moves if (r["kind"], r["name"]) == ("status", "active"))
        tiers = _rows(proj, q.by_status_and_tier("ns"))
        now = sum(r["memories"] for r in tiers if r["status"] == "active")
        assert active == now  # the deltas add up to what the memories table says
        assert sum(r["memories"] for r in tiers) >= 2
        assert sum(r["memories"] for r in _rows(proj, q.q_histogram("ns"))) >= 1
        assert all(0 <= r["bucket"] <= 9 for r in _rows(proj, q.q_histogram("ns")))
        _rows(proj, q.q_per_day("ns"))
        recent = _rows(proj, q.recent_memories("ns"))
        assert recent and recent[0]["memory_id"]
        timeline = _rows(proj, q.memory_events("ns", recent[0]["memory_id"]))
        assert timeline and isinstance(timeline[0]["at"], float)
        assert _rows(proj, q.memory_events("other", recent[0]["memory_id"])) == []
        _rows(proj, q.evolution("ns"))
        _rows(proj, q.events_per_minute("ns"))
        totals = {r["topic"]: r["events"] for r in _rows(proj, q.totals("ns"))}
        assert totals["memory_log"] == len(run(SCRIPT)[1]) and totals["turns"] == 0
        assert _rows(proj, q.dead_letters("ns")) == [{"dead_letters": 0}]
        assert _rows(proj, q.dead_letters(None)) == [{"dead_letters": 0}]
        assert _rows(proj, q.namespaces()) == [{"namespace": "ns"}]
    finally:
        proj.close()
