"""The reports read from the analytics projection: knowledge gaps and workflow health with
its evidence. One definition each, for the CLI, the HTTP API and the MCP server."""

from __future__ import annotations

from typing import Any

from memstream.projections.duckdb_schema import GAP_MIN_SEARCHES, GAP_SCORE_THRESHOLD

Query = tuple[str, list[Any]]


def gaps_query(days: int, namespace: str | None = None) -> Query:
    """Topics searched at least GAP_MIN_SEARCHES times in the last ``days`` (of event time,
    counted back from the latest search) whose answers scored poorly on average."""
    where = "AND namespace = ?" if namespace else ""
    params: list[Any] = [days] + ([namespace] if namespace else [])
    return (
        f"""
        WITH ref AS (SELECT max(occurred_at) AS now FROM searches)
        SELECT namespace, topic, count(*) AS searches, round(avg(coalesce(top_score, 0)), 4) AS avg_top_score,
               list(DISTINCT query)[1:3] AS example_queries,
               'document "' || topic || '": what do people ask about it, and where is the answer?' AS suggestion
        FROM searches, ref
        WHERE occurred_at >= ref.now - to_days(CAST(? AS INTEGER)) {where}
        GROUP BY namespace, topic
        HAVING count(*) >= {GAP_MIN_SEARCHES} AND avg(coalesce(top_score, 0)) < {GAP_SCORE_THRESHOLD}
        ORDER BY searches DESC, avg_top_score""",
        params,
    )


def health_query(namespace: str | None = None, workflow: str | None = None) -> Query:
    where = [c for c, v in (("namespace = ?", namespace), ("workflow = ?", workflow)) if v]
    return (
        "SELECT * FROM workflow_health"
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + " ORDER BY namespace, workflow",
        [v for v in (namespace, workflow) if v],
    )


def evidence_query(namespace: str, workflow: str, limit: int) -> Query:
    """The latest runs of a workflow that did not succeed: what its health is judged on."""
    return (
        "SELECT occurred_at, outcome, detail FROM workflows WHERE namespace = ? AND "
        "workflow = ? AND outcome <> 'success' ORDER BY occurred_at DESC LIMIT ?",
        [namespace, workflow, limit],
    )


def suggestions(outcomes: set[str]) -> list[str]:
    """What to do about the kinds of unsuccessful runs seen."""
    out = []
    if "failure" in outcomes:
        out.append("add a regression test that replays the failing inputs above")
    if "corrected" in outcomes:
        out.append(
            "tighten the rule or prompt that produced the corrected outputs; record the correction"
        )
    if "missed" in outcomes:
        out.append("add a trigger or rule for the missed cases (they never started)")
    return out


def status_text(status: str) -> str:
    return (
        "too few observations to judge (3 in 7 days needed)" if status == "insufficient" else status
    )


def metadata_query(
    kind: str | None = None,
    namespace: str | None = None,
    contains: str | None = None,
    limit: int = 1000,
) -> Query:
    """Metadata values of active memories, one row each: namespace, memory_id, kind, value,
    text; of one kind, one namespace, and values holding a fragment (any case) if given."""
    from memstream.core.metadata import KINDS

    kinds = [kind] if kind else list(KINDS)
    where, params = ["m.status = 'active'", "coalesce(m.metadata, '') <> ''"], []
    if namespace:
        where.append("m.namespace = ?")
        params.append(namespace)
    parts = " UNION ALL ".join(
        f"""SELECT m.namespace, m.memory_id, '{k}' AS kind,
                   unnest(from_json(json_extract(m.metadata, '$.{k}'), '["VARCHAR"]')) AS value,
                   m.text, m.updated_at
            FROM memories m WHERE {" AND ".join(where)}
              AND json_extract(m.metadata, '$.{k}') IS NOT NULL"""
        for k in kinds
        if k in KINDS
    )
    outer, outer_params = "", []
    if contains:
        outer = "WHERE value ILIKE ?"
        outer_params.append(f"%{contains}%")
    sql = f"""SELECT namespace, memory_id, kind, value, text FROM ({parts}) AS v {outer}
              ORDER BY namespace, kind, updated_at DESC, value LIMIT {int(limit)}"""
    return sql, params * len([k for k in kinds if k in KINDS]) + outer_params
