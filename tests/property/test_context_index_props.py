"""The hot block's candidate rows, "now" and the category tree's inputs kept in memory by the
DuckDB projection (projections/hot_index.py, memory_mirror.py) answer what the queries
answer (hot_queries.CANDIDATES and NOW, tree_queries.load_tree), through any sequence of
batches of new memories, updates, archives, restores, Q changes, accesses and node events
(re-deliveries included), whether a namespace was first read before or after them. With
the sections' limits shrunk too, so a handful of memories fills, overflows and empties
every top list."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.core import hot_sections
from memstream.core.category_tree import TreeConfig, build_tree
from memstream.core.hashing import content_hash
from memstream.infra.topics import topic_names
from memstream.projections import hot_index
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.hot_queries import CANDIDATES, NOW, params
from memstream.projections.port import LogRecord
from memstream.projections.tree_queries import load_tree
from memstream.schemas import (
    AccessedMemory,
    MemoryAccessed,
    MemoryArchived,
    MemoryCreated,
    MemoryRestored,
    MemoryUpdated,
    QValueUpdated,
    TreeNodeAdded,
    TreeNodeRemoved,
    encode,
    make_event,
)

TOPICS = topic_names("t")
T0 = datetime(2024, 3, 1, tzinfo=UTC)
IDS = [f"m{i}" for i in range(8)]
NSS = ["ns-a", "ns-b"]
CATEGORIES = ["fact", "preference", "commitment", "principle", "summary"]
TEXTS = [
    "Dana will send the budget report",
    "Dana sent the budget report",
    "Dana prefers tea",
    "Always test before shipping",
    "The runbook lives in the wiki",
    "Dana finished the garden shed",
    "xſent a note",
]

created = st.fixed_dictionaries(
    {
        "op": st.just("create"),
        "text": st.sampled_from(TEXTS),
        "category": st.sampled_from(CATEGORIES),
        "importance": st.sampled_from([0.1, 0.5, 0.5, 0.9]),
        "slot": st.sampled_from([None, None, "name", "location"]),
        "session": st.sampled_from([None, "s1", "s2"]),
        "url": st.booleans(),
        "valid_from": st.sampled_from([None, None, 30]),
        "entities": st.sampled_from([[], ["Budget", "Dana"]]),
    }
)
changed = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["update", "archive", "restore", "q"]),
        "text": st.sampled_from(TEXTS),
        "q": st.sampled_from([0.2, 0.85, 0.95]),
    }
)
accessed = st.fixed_dictionaries(
    {"op": st.just("access"), "ids": st.lists(st.sampled_from(IDS), min_size=1, max_size=3)}
)
tree = st.fixed_dictionaries(
    {"op": st.sampled_from(["node+", "node-"]), "path": st.sampled_from(["work", "work/budget"])}
)
step = st.tuples(
    st.sampled_from(NSS),
    st.sampled_from(IDS),
    st.integers(0, 600),  # minutes after T0 (event time may go back)
    st.one_of(created, created, changed, changed, accessed, tree),
)


def _event(ns: str, mid: str, minutes: int, op: dict[str, Any], n: int) -> Any:
    at = T0 + timedelta(minutes=minutes)
    kind = op["op"]
    if kind == "create":
        text = f"{op['text']} {mid}"
        payload: Any = MemoryCreated(
            memory_id=mid,
            text=text,
            category=op["category"],
            content_hash=content_hash(ns, text),
            importance=op["importance"],
            subject="dana",
            slot=op["slot"],
            entities=op["entities"],
            valid_from=at - timedelta(minutes=op["valid_from"]) if op["valid_from"] else None,
            metadata={"url": [f"https://wiki.example.org/{mid}"]} if op["url"] else {},
        )
        return make_event(payload, namespace=ns, occurred_at=at, session_id=op["session"])
    if kind == "update":
        text = f"{op['text']} {mid} v{n}"
        payload = MemoryUpdated(
            memory_id=mid, text=text, previous_text="", content_hash=content_hash(ns, text)
        )
    elif kind == "archive":
        payload = MemoryArchived(memory_id=mid, rule="test")
    elif kind == "restore":
        payload = MemoryRestored(memory_id=mid, reason="test")
    elif kind == "q":
        payload = QValueUpdated(
            memory_id=mid,
            old_q=0.5,
            new_q=op["q"],
            reward=1.0,
            weight=1.0,
            alpha=0.5,
            feedback_event_id=f"f{n}",
        )
    elif kind == "access":
        # ten recalls at once, so access counts cross the hot section's threshold
        return [
            make_event(
                MemoryAccessed(
                    query_id=f"q{n}-{i}",
                    query="what",
                    top_score=0.5,
                    memories=[
                        AccessedMemory(memory_id=m, rank=r + 1, score=0.5)
                        for r, m in enumerate(dict.fromkeys(op["ids"]))
                    ],
                ),
                namespace=ns,
                occurred_at=at + timedelta(seconds=i),
            )
            for i in range(10)
        ]
    else:
        cls = TreeNodeAdded if op["op"] == "node+" else TreeNodeRemoved
        payload = cls(path=op["path"])
    return make_event(payload, namespace=ns, occurred_at=at)


def _records(events: list[Any], offsets: dict[str, int]) -> list[LogRecord]:
    out = []
    for e in events:
        topic = "t.access" if e.type == "MemoryAccessed" else "t.memory.log"
        out.append(LogRecord(topic, 0, offsets.get(topic, 0), e.namespace.encode(), encode(e)))
        offsets[topic] = offsets.get(topic, 0) + 1
    return out


def _sql_candidates(proj: DuckDBProjection, ns: str, session: str | None) -> dict[str, Any]:
    """The reference: CANDIDATES as shipped, or its sections' own SQL when shrunk."""
    if hot_index.SECTIONS is hot_sections.SECTIONS:
        rows = proj.every_row(CANDIDATES, params(ns, session))
    else:
        ids: set[str] = set()
        for section in (*hot_index.SECTIONS, hot_sections.session_section(session or "")):
            extra: list[Any] = [hot_sections.DONE_PARAM] if section.name == "done" else []
            extra += [session or ""] if section.name == "session" else []
            ids.update(
                r["memory_id"] for r in proj.every_row(hot_index._sql(section), [ns, *extra])
            )
        full = proj.every_row(
            "SELECT m.*, coalesce(u.n, 0) AS access_count FROM memories m LEFT JOIN "
            "(SELECT memory_id, count(*) AS n FROM access_hits WHERE namespace = ? "
            "GROUP BY memory_id) u USING (memory_id) WHERE namespace = ? AND status = 'active'",
            [ns, ns],
        )
        hot = sorted(
            (r for r in full if r["q_value"] >= 0.8 and r["access_count"] >= 10),  # hot branch
            key=lambda r: (-r["q_value"], r["memory_id"]),
        )[: hot_sections.HOT_LIMIT]
        wanted = ids | {r["memory_id"] for r in hot}
        rows = [r for r in full if r["memory_id"] in wanted]
    return {r["memory_id"]: {k: r[k] for k in (*hot_index.NAMES, "access_count")} for r in rows}


def _check(proj: DuckDBProjection, ns: str, session: str | None) -> None:
    rows, now = proj.hot_rows(ns, session)
    kept = {r["memory_id"]: r for r in rows}
    assert kept == _sql_candidates(proj, ns, session)
    sql_now = proj.every_row(NOW, [ns])
    assert now == (sql_now[0]["now"] if sql_now else None)
    memories, edits, at = proj.mirror.tree_inputs(ns)
    assert at == now
    from_sql = load_tree(proj.every_row, ns)
    assert build_tree(ns, memories, edits, at, TreeConfig()).as_dict() == from_sql.as_dict()


@contextmanager
def _limits(shrink: bool) -> Iterator[None]:
    if not shrink:
        yield
        return
    small = tuple(
        dataclasses.replace(s, limit=1 + i % 2) for i, s in enumerate(hot_sections.SECTIONS)
    )
    before = hot_index.SECTIONS
    hot_index.SECTIONS = small  # type: ignore[misc]
    try:
        yield
    finally:
        hot_index.SECTIONS = before  # type: ignore[misc]


@pytest.mark.parametrize("shrink", [False, True])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(step, min_size=1, max_size=10), min_size=1, max_size=8), st.data())
def test_the_kept_rows_are_the_query_rows(shrink: bool, batches: list[Any], data: Any) -> None:
    with _limits(shrink):
        proj = DuckDBProjection(":memory:", TOPICS)
        try:
            offsets: dict[str, int] = {}
            n = 0
            for b, batch in enumerate(batches):
                if b == 1:  # one namespace read before the later batches, the other after
                    proj.hot_rows("ns-a", None)
                    proj.mirror.tree_inputs("ns-a")
                events: list[Any] = []
                for ns, mid, minutes, op in batch:
                    n += 1
                    made = _event(ns, mid, minutes, op, n)
                    events.extend(made if isinstance(made, list) else [made])
                records = _records(events, offsets)
                proj.apply(records)
                if data.draw(st.booleans()):
                    proj.apply(records)  # re-delivered: no change
                for ns in NSS:
                    _check(proj, ns, data.draw(st.sampled_from([None, "s1", "s2"])))
        finally:
            proj.close()
