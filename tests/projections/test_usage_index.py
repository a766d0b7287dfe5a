"""Recall's usage and co-activation counts kept in memory answer what the SQL over
``access_hits`` answers, through any sequence of access batches (re-deliveries included), on
a real DuckDB projection, whether a namespace was first asked before or after them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.infra.topics import topic_names
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.port import LogRecord
from memstream.schemas import AccessedMemory, MemoryAccessed, encode, make_event

TOPICS = topic_names("t")
T0 = datetime(2024, 3, 1, tzinfo=UTC)
IDS = [f"m{i}" for i in range(6)]

recalls = st.lists(
    st.tuples(
        st.sampled_from(["ns-a", "ns-b"]),
        st.lists(st.sampled_from(IDS), min_size=1, max_size=4, unique=True),
        st.integers(0, 400),  # minutes after T0
    ),
    max_size=12,
)


def _sql_usage(proj: DuckDBProjection, ns: str, ids: list[str]) -> dict[str, Any]:
    rows = proj.every_row(
        "SELECT memory_id, count(*) AS n, max(occurred_at) AS last FROM access_hits "
        "WHERE namespace = ? AND memory_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY memory_id",
        [ns, ids],
    )
    return {r["memory_id"]: (int(r["n"]), r["last"]) for r in rows}


def _sql_pairs(proj: DuckDBProjection, ns: str, ids: list[str]) -> dict[tuple[str, str], int]:
    rows = proj.every_row(
        "SELECT a.memory_id AS a, b.memory_id AS b, count(*) AS n FROM access_hits a "
        "JOIN access_hits b ON a.event_id = b.event_id AND a.memory_id < b.memory_id "
        "WHERE a.namespace = ? AND a.memory_id IN (SELECT unnest(?::VARCHAR[])) "
        "AND b.memory_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY ALL",
        [ns, ids, ids],
    )
    return {(r["a"], r["b"]): int(r["n"]) for r in rows}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(recalls, min_size=1, max_size=4), st.lists(st.sampled_from(IDS), max_size=6))
def test_the_kept_counts_are_the_sql_counts(batches: list[Any], asked: list[str]) -> None:
    proj = DuckDBProjection(":memory:", TOPICS)
    try:
        offset, n = 0, 0
        for b, batch in enumerate(batches):
            if b == 1:  # one namespace loaded before the later batches, the other after
                proj.usage.usage("ns-a", IDS)
            events = []
            for ns, ids, minutes in batch:
                n += 1
                events.append(
                    make_event(
                        MemoryAccessed(
                            query_id=f"q{n}",
                            query="what",
                            top_score=0.5,
                            memories=[
                                AccessedMemory(memory_id=m, rank=r + 1, score=0.5)
                                for r, m in enumerate(ids)
                            ],
                        ),
                        namespace=ns,
                        occurred_at=T0 + timedelta(minutes=minutes),
                    )
                )
            records = [
                LogRecord("t.access", 0, offset + i, e.namespace.encode(), encode(e))
                for i, e in enumerate(events)
            ]
            proj.apply(records)
            proj.apply(records)  # re-delivered: counted once
            offset += len(records)
        for ns in ("ns-a", "ns-b"):
            assert proj.usage.usage(ns, asked) == _sql_usage(proj, ns, asked)
            assert proj.usage.together(ns, asked) == _sql_pairs(proj, ns, asked)
    finally:
        proj.close()
