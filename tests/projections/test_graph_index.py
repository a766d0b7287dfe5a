"""The kept adjacency and labels answer what the recursive CTE and the table answer, through
any sequence of edge batches (added, re-added with a new confidence, removed) and memory
changes (text updated, archived), in every namespace, on a real DuckDB projection; a
rolled-back batch leaves it as the table."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.core.hashing import content_hash
from memstream.infra.topics import topic_names
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.graph_queries import indexed_neighbourhood, neighbourhood
from memstream.projections.port import LogRecord
from memstream.schemas import (
    MemoryArchived,
    MemoryCreated,
    MemoryUpdated,
    RelationAdded,
    RelationRemoved,
    encode,
    make_event,
)

TOPICS = topic_names("t")
T0 = datetime(2024, 3, 1, tzinfo=UTC)
NODES = [f"m{i}" for i in range(8)]
RELATIONS = ["causes", "same_entity", "elaborates"]

edge_ops = st.lists(
    st.tuples(
        st.sampled_from(["ns-a", "ns-b"]),
        st.sampled_from(NODES),
        st.sampled_from(NODES),
        st.sampled_from(RELATIONS),
        st.booleans(),  # add (True) or remove
        st.floats(min_value=0.2, max_value=1.0),
    ).filter(lambda t: t[1] != t[2]),
    max_size=40,
)
memory_ops = st.lists(
    st.tuples(
        st.sampled_from(["ns-a", "ns-b"]),
        st.sampled_from(NODES),
        st.sampled_from(["update", "archive"]),
    ),
    max_size=6,
)


def _memories() -> list[Any]:
    return [
        make_event(
            MemoryCreated(
                memory_id=node,
                text=f"memory {node}",
                category="fact",
                content_hash=content_hash(ns, node),
            ),
            namespace=ns,
            occurred_at=T0,
        )
        for ns in ("ns-a", "ns-b")
        for node in NODES
    ]


def _edges(ops: list[tuple[str, str, str, str, bool, float]], start: int) -> list[Any]:
    out = []
    for i, (ns, a, b, rel, add, conf) in enumerate(ops):
        payload = (
            RelationAdded(memory_id=a, target_id=b, relation=rel, confidence=conf, rule="test")  # type: ignore[arg-type]
            if add
            else RelationRemoved(memory_id=a, target_id=b, relation=rel, reason="test")  # type: ignore[arg-type]
        )
        out.append(make_event(payload, namespace=ns, occurred_at=T0 + timedelta(seconds=start + i)))
    return out


def _changes(ops: list[tuple[str, str, str]], start: int) -> list[Any]:
    out = []
    for i, (ns, node, op) in enumerate(ops):
        text = f"memory {node} said again at {start + i}"
        payload = (
            MemoryUpdated(
                memory_id=node,
                text=text,
                previous_text=f"memory {node}",
                content_hash=content_hash(ns, text),
            )
            if op == "update"
            else MemoryArchived(memory_id=node, rule="test")
        )
        out.append(make_event(payload, namespace=ns, occurred_at=T0 + timedelta(seconds=start + i)))
    return out


def _apply(proj: DuckDBProjection, events: list[Any], start: int) -> None:
    proj.apply(
        [
            LogRecord("t.memory.log", 0, start + i, e.namespace.encode(), encode(e))
            for i, e in enumerate(events)
        ]
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(edge_ops, memory_ops), min_size=1, max_size=4),
    st.sampled_from(NODES),
    st.integers(1, 3),
)
def test_the_kept_walk_is_the_sql_walk(
    batches: list[tuple[list[tuple[str, str, str, str, bool, float]], list[tuple[str, str, str]]]],
    start: str,
    hops: int,
) -> None:
    proj = DuckDBProjection(":memory:", TOPICS)
    try:
        _apply(proj, _memories(), 0)
        offset = 100
        for n, (ops, changes) in enumerate(batches):
            if n == 1:  # one namespace loaded before later batches, the other after
                indexed_neighbourhood(proj.graph, "ns-a", start, hops)
            events = _edges(ops, offset) + _changes(changes, offset + len(ops))
            _apply(proj, events, offset)
            offset += len(events) + 1
        for ns in ("ns-a", "ns-b"):
            for relation in (None, "causes"):
                kept = indexed_neighbourhood(proj.graph, ns, start, hops, relation=relation)
                assert kept == neighbourhood(proj.rows, ns, start, hops, relation=relation)
    finally:
        proj.close()


def test_a_rolled_back_batch_leaves_the_kept_graph_as_the_table(monkeypatch: Any) -> None:
    import pytest

    proj = DuckDBProjection(":memory:", TOPICS)
    try:
        _apply(proj, _memories(), 0)
        _apply(proj, _edges([("ns-a", "m0", "m1", "causes", True, 0.8)], 100), 100)
        before = indexed_neighbourhood(proj.graph, "ns-a", "m0", 2)
        real = proj._insert

        def failing(table: str, rows: Any, **kw: Any) -> Any:
            if table == "relations":
                raise RuntimeError("disk full")
            return real(table, rows, **kw)

        monkeypatch.setattr(proj, "_insert", failing)
        with pytest.raises(RuntimeError):
            _apply(proj, _edges([("ns-a", "m1", "m2", "causes", True, 0.9)], 200), 200)
        monkeypatch.setattr(proj, "_insert", real)
        after = indexed_neighbourhood(proj.graph, "ns-a", "m0", 2)
        assert after == before == neighbourhood(proj.rows, "ns-a", "m0", 2)
    finally:
        proj.close()
