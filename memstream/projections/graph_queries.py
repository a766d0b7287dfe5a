"""Graph queries over the analytics projection: a memory's neighbourhood within k hops
(a recursive CTE over ``relations``), the edges among it, and the same as of any time
(folded from the ``RelationAdded`` / ``RelationRemoved`` events of ``memory_log``).

The statements run through the read-only user connection (``DuckDBProjection.user_query``)
so the HTTP route, the CLI and the benchmark ask exactly the same thing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from memstream.core.relations import RELATION_TYPES
from memstream.projections.graph_index import GraphIndex
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
    """Every edge within ``hops`` of ``memory_id`` (either direction), one row per edge and
    the node it reached at that depth, with what that memory says; the start is the row of
    depth 0 with no edge."""
    check(hops, relation)
    edges, times, rel = _edges(as_of, relation)
    sql = (
        f"WITH RECURSIVE e AS ({edges}), "
        "walk(node, depth, source_id, target_id, relation, confidence, rule, added_at) AS ("
        "SELECT ?::VARCHAR, 0, NULL::VARCHAR, NULL::VARCHAR, NULL::VARCHAR, NULL::DOUBLE, "
        "NULL::VARCHAR, NULL::TIMESTAMPTZ UNION "
        "SELECT CASE WHEN e.source_id = walk.node THEN e.target_id ELSE e.source_id END, "
        "walk.depth + 1, e.source_id, e.target_id, e.relation, e.confidence, e.rule, e.added_at "
        "FROM walk JOIN e ON e.source_id = walk.node OR e.target_id = walk.node "
        "WHERE walk.depth < ?) "
        "SELECT w.*, m.text, m.category, m.status FROM walk w "
        "LEFT JOIN memories m ON m.namespace = ? AND m.memory_id = w.node"
    )
    return sql, [namespace, *times, *rel, memory_id, hops, namespace]


def neighbourhood(
    query: Query,
    namespace: str,
    memory_id: str,
    hops: int = 2,
    *,
    as_of: datetime | None = None,
    relation: str | None = None,
) -> dict[str, Any]:
    """``{"nodes": [...], "edges": [...]}`` within ``hops`` of ``memory_id``: each node with
    its least depth, each edge once (``query`` runs one statement with its parameters)."""
    sql, params = neighbourhood_sql(namespace, memory_id, hops, as_of=as_of, relation=relation)
    nodes: dict[str, dict[str, Any]] = {}
    edges: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in query(sql, params):
        node = nodes.get(row["node"])
        if node is None or row["depth"] < node["depth"]:
            nodes[row["node"]] = {
                "memory_id": row["node"],
                "depth": row["depth"],
                "text": row["text"],
                "category": row["category"],
                "status": row["status"],
            }
        if row["source_id"] is not None:
            at = row["added_at"]
            edges[(row["source_id"], row["target_id"], row["relation"])] = {
                "source_id": row["source_id"],
                "target_id": row["target_id"],
                "relation": row["relation"],
                "confidence": row["confidence"],
                "rule": row["rule"],
                "added_at": at.isoformat() if isinstance(at, datetime) else at,
            }
    return {
        "nodes": sorted(nodes.values(), key=lambda n: (n["depth"], n["memory_id"])),
        "edges": [edges[k] for k in sorted(edges)],
    }


def indexed_neighbourhood(
    index: GraphIndex,
    namespace: str,
    memory_id: str,
    hops: int = 2,
    *,
    relation: str | None = None,
) -> dict[str, Any]:
    """``neighbourhood`` of the live graph, walked over the in-memory adjacency and labelled
    from the kept labels (``projections.graph_index``): the same answer."""
    check(hops, relation)
    depth, found = index.neighbourhood(namespace, memory_id, hops, relation)
    about = index.labels(namespace, depth)
    nodes = [
        {
            "memory_id": node,
            "depth": d,
            "text": about.get(node, {}).get("text"),
            "category": about.get(node, {}).get("category"),
            "status": about.get(node, {}).get("status"),
        }
        for node, d in depth.items()
    ]
    edges = [
        {
            **found[key],
            "added_at": at.isoformat()
            if isinstance(at := found[key]["added_at"], datetime)
            else at,
        }
        for key in sorted(found)
    ]
    return {"nodes": sorted(nodes, key=lambda n: (n["depth"], n["memory_id"])), "edges": edges}


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
