"""Graph queries over the analytics projection: a memory's neighbourhood within k hops
(a recursive CTE over ``relations``), the edges among it, and the same as of any time
(folded from the ``RelationAdded`` / ``RelationRemoved`` events of ``memory_log``).

The statements run through the read-only user connection (``DuckDBProjection.user_query``)
so the HTTP route, the CLI and the benchmark ask exactly the same thing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from memstream.core.relations import RELATION_TYPES
from memstream.schemas.errors import EventValidationError

Query = Callable[[str, list[Any]], list[dict[str, Any]]]

MAX_HOPS = 4

# the live edges of one namespace
_LIVE = (
    "SELECT source_id, target_id, relation, confidence, rule, added_at FROM relations "
    "WHERE namespace = ?"
)
# the edges as of a time: each edge's latest event by then, if it was an addition
_AS_OF = (
    "SELECT source_id, target_id, relation, confidence, rule, added_at FROM ("
    "SELECT payload->>'memory_id' AS source_id, payload->>'target_id' AS target_id, "
    "payload->>'relation' AS relation, CAST(payload->>'confidence' AS DOUBLE) AS confidence, "
    "payload->>'rule' AS rule, occurred_at AS added_at, type, row_number() OVER ("
    "PARTITION BY payload->>'memory_id', payload->>'target_id', payload->>'relation' "
    "ORDER BY occurred_at DESC, log_partition DESC, log_offset DESC) AS latest "
    "FROM memory_log WHERE namespace = ? AND type IN ('RelationAdded', 'RelationRemoved') "
    "AND occurred_at <= ?) WHERE latest = 1 AND type = 'RelationAdded'"
)


def _edges(as_of: datetime | None, relation: str | None) -> tuple[str, list[Any], list[Any]]:
    """The edge set's SQL and its parameters (namespace first, then the time)."""
    base = _AS_OF if as_of is not None else _LIVE
    where = " AND relation = ?" if relation else ""
    sql = f"SELECT * FROM ({base}) WHERE true{where}"
    return sql, ([as_of] if as_of is not None else []), ([relation] if relation else [])


def check(hops: int, relation: str | None) -> None:
    if not 1 <= hops <= MAX_HOPS:
        raise EventValidationError("bad_value", f"hops must be 1..{MAX_HOPS}", "hops")
    if relation is not None and relation not in RELATION_TYPES:
        raise EventValidationError(
            "bad_value", f"unknown relation; one of {', '.join(RELATION_TYPES)}", "relation"
        )


def neighbourhood_sql(
    namespace: str,
    memory_id: str,
    hops: int,
    *,
    as_of: datetime | None = None,
    relation: str | None = None,
) -> tuple[str, list[Any]]:
    """Nodes within ``hops`` of ``memory_id`` (either direction) with their least depth and
    what the memory says; the start node has depth 0."""
    check(hops, relation)
    edges, times, rel = _edges(as_of, relation)
    sql = (
        f"WITH RECURSIVE e AS ({edges}), walk(node, depth) AS ("
        "SELECT ?::VARCHAR, 0 UNION "
        "SELECT CASE WHEN e.source_id = walk.node THEN e.target_id ELSE e.source_id END, "
        "walk.depth + 1 FROM walk JOIN e ON e.source_id = walk.node OR e.target_id = walk.node "
        "WHERE walk.depth < ?) "
        "SELECT w.node AS memory_id, min(w.depth) AS depth, any_value(m.text) AS text, "
        "any_value(m.category) AS category, any_value(m.status) AS status "
        "FROM walk w LEFT JOIN memories m ON m.namespace = ? AND m.memory_id = w.node "
        "GROUP BY w.node ORDER BY depth, memory_id"
    )
    return sql, [namespace, *times, *rel, memory_id, hops, namespace]


def edges_among_sql(
    namespace: str,
    ids: Sequence[str],
    *,
    as_of: datetime | None = None,
    relation: str | None = None,
) -> tuple[str, list[Any]]:
    edges, times, rel = _edges(as_of, relation)
    sql = (
        f"SELECT * FROM ({edges}) WHERE source_id IN (SELECT unnest(?::VARCHAR[])) "
        "AND target_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY source_id, target_id, relation"
    )
    return sql, [namespace, *times, *rel, list(ids), list(ids)]


def neighbourhood(
    query: Query,
    namespace: str,
    memory_id: str,
    hops: int = 2,
    *,
    as_of: datetime | None = None,
    relation: str | None = None,
) -> dict[str, Any]:
    """``{"nodes": [...], "edges": [...]}`` around ``memory_id`` (``query`` runs one
    statement with its parameters)."""
    sql, params = neighbourhood_sql(namespace, memory_id, hops, as_of=as_of, relation=relation)
    nodes = query(sql, params)
    sql, params = edges_among_sql(
        namespace, [n["memory_id"] for n in nodes], as_of=as_of, relation=relation
    )
    edges = query(sql, params)
    for e in edges:
        at = e.get("added_at")
        e["added_at"] = at.isoformat() if isinstance(at, datetime) else at
    return {"nodes": nodes, "edges": edges}


def to_dot(memory_id: str, graph: dict[str, Any]) -> str:
    """Graphviz DOT of a neighbourhood: the start memory bold, edges labelled with their
    relation and confidence."""

    def quote(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'

    lines = ["digraph memories {", "  node [shape=box];"]
    for n in graph["nodes"]:
        label = (n.get("text") or n["memory_id"])[:80]
        style = ", style=bold" if n["memory_id"] == memory_id else ""
        if n.get("status") not in (None, "active"):
            style += ", color=gray"
        lines.append(f"  {quote(n['memory_id'])} [label={quote(label)}{style}];")
    for e in graph["edges"]:
        label = f"{e['relation']} {float(e['confidence']):.2f}"
        lines.append(
            f"  {quote(e['source_id'])} -> {quote(e['target_id'])} [label={quote(label)}];"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"
