"""The dashboard's questions to the analytics projection, one namespace at a time.

Each function returns ``(sql, params)`` for the worker's read connection: pure builders, so
the SQL is checked once (tests/projections/test_dashboard_queries.py) and every door that
shows a namespace passes it as a parameter, never as text. Times come back as epoch
seconds: the charts' x axes.
"""

from __future__ import annotations

from typing import Any

Query = tuple[str, list[Any]]

#: the raw topics a namespace's events live on, as the overview counts them
TOPIC_TABLES = ("turns", "access", "feedback", "workflows", "recall_requests", "memory_log")

#: memory decisions drawn over event time
DECISIONS = (
    "MemoryCreated",
    "MemoryUpdated",
    "MemoryReinforced",
    "MemorySuperseded",
    "MemoryArchived",
    "MemoryMerged",
    "TierChanged",
    "QValueUpdated",
)


def events_per_minute(namespace: str, minutes: int = 60) -> Query:
    """Events recorded per minute and topic over the last ``minutes`` of the namespace's
    recording time (when the broker took them: throughput is a wall-clock matter)."""
    union = " UNION ALL ".join(
        f"SELECT '{t}' AS topic, recorded_at FROM {t} WHERE namespace = ?" for t in TOPIC_TABLES
    )
    sql = f"""
        WITH t AS ({union}), ref AS (SELECT max(recorded_at) AS now FROM t)
        SELECT topic, epoch(date_trunc('minute', recorded_at))::BIGINT AS "at", count(*) AS events
        FROM t, ref WHERE recorded_at >= ref.now - INTERVAL {int(minutes)} MINUTE
        GROUP BY ALL ORDER BY "at", topic"""
    return sql, [namespace] * len(TOPIC_TABLES)


def totals(namespace: str) -> Query:
    sql = " UNION ALL ".join(
        f"SELECT '{t}' AS topic, count(*) AS events FROM {t} WHERE namespace = ?"
        for t in TOPIC_TABLES
    )
    return sql, [namespace] * len(TOPIC_TABLES)


def dead_letters(namespace: str | None) -> Query:
    """Dead letters of one namespace (the original names it), or of all (None: admin)."""
    if namespace is None:
        return "SELECT count(*) AS dead_letters FROM dead_letters", []
    return (
        """SELECT count(*) AS dead_letters FROM dead_letters
           WHERE try(json_extract_string(CAST(original AS VARCHAR), '$.namespace')) = ?""",
        [namespace],
    )


def decisions_per_day(namespace: str) -> Query:
    """The memory log's decisions per event-time day and type."""
    marks = ", ".join("?" for _ in DECISIONS)
    sql = f"""
        SELECT epoch(date_trunc('day', occurred_at))::BIGINT AS "at", type, count(*) AS events
        FROM memory_log WHERE namespace = ? AND type IN ({marks})
        GROUP BY ALL ORDER BY "at", type"""
    return sql, [namespace, *DECISIONS]


def counts_over_time(namespace: str) -> Query:
    """Per event-time day, what entered and left each status and tier (``kind`` status or
    tier, ``name``, ``delta``): summed in order they give the counts on every day.
    Status: created -> active; archived and superseded leave it, restored comes back."""
    day = "epoch(date_trunc('day', occurred_at))::BIGINT"
    parts = [
        ("'tier', payload->>'tier', 1", "MemoryCreated"),
        ("'tier', payload->>'to_tier', 1", "TierChanged"),
        ("'tier', payload->>'from_tier', -1", "TierChanged"),
        ("'status', 'active', 1", "MemoryCreated"),
        ("'status', 'active', -1", "MemoryArchived"),
        ("'status', 'archived', 1", "MemoryArchived"),
        ("'status', 'active', -1", "MemorySuperseded"),
        ("'status', 'superseded', 1", "MemorySuperseded"),
        ("'status', 'active', 1", "MemoryRestored"),
        ("'status', 'archived', -1", "MemoryRestored"),
    ]
    union = " UNION ALL ".join(
        f"SELECT {day} AS at_s, {cols} FROM memory_log WHERE namespace = ? AND type = '{t}'"
        for cols, t in parts
    )
    sql = f"""
        SELECT at_s AS "at", kind, name, sum(delta)::BIGINT AS delta
        FROM ({union}) AS moves(at_s, kind, name, delta)
        WHERE name IS NOT NULL GROUP BY ALL ORDER BY 1, 2, 3"""
    return sql, [namespace] * len(parts)


def by_status_and_tier(namespace: str) -> Query:
    return (
        """SELECT status, tier, count(*) AS memories FROM memories WHERE namespace = ?
           GROUP BY ALL ORDER BY status, tier""",
        [namespace],
    )


def q_histogram(namespace: str) -> Query:
    """Active memories per tenth of Q (0.0 .. 0.9; Q = 1 counts in the last)."""
    return (
        """SELECT least(floor(q_value * 10), 9)::INTEGER AS bucket, count(*) AS memories
           FROM memories WHERE namespace = ? AND status = 'active' GROUP BY ALL ORDER BY bucket""",
        [namespace],
    )


def q_per_day(namespace: str) -> Query:
    """Q updates per event-time day: how many, their mean step and the mean Q after."""
    return (
        """SELECT epoch(date_trunc('day', occurred_at))::BIGINT AS "at", count(*) AS updates,
                  avg(new_q - old_q) AS mean_change, avg(new_q) AS mean_q
           FROM q_history WHERE namespace = ? GROUP BY ALL ORDER BY 1""",
        [namespace],
    )


def recent_memories(namespace: str, limit: int = 50) -> Query:
    return (
        f"""SELECT memory_id, text, category, status, tier, q_value, access_count,
                   epoch(updated_at)::BIGINT AS updated
            FROM memory_view WHERE namespace = ? ORDER BY updated_at DESC, memory_id
            LIMIT {int(limit)}""",
        [namespace],
    )


def evolution(namespace: str) -> Query:
    return (
        """SELECT memory_id, text, q_value, access_count, epoch(last_access)::BIGINT AS last_access,
                  level, action
           FROM evolution_candidates WHERE namespace = ? ORDER BY level, q_value, memory_id""",
        [namespace],
    )


def memory_events(namespace: str, memory_id: str) -> Query:
    """One memory's decisions in log order, with their causes: its timeline."""
    return (
        """SELECT epoch(occurred_at)::DOUBLE AS "at", type, event_id, causation_id, producer,
                  coalesce(payload->>'reason', payload->>'rule', payload->>'trigger',
                           'reward ' || (payload->>'reward'), '') AS reason,
                  coalesce(payload->>'to_tier', payload->>'tier', '') AS tier,
                  TRY_CAST(payload->>'new_q' AS DOUBLE) AS new_q,
                  coalesce(payload->>'text', '') AS text
           FROM memory_log WHERE namespace = ? AND memory_id = ?
           ORDER BY log_partition, log_offset""",
        [namespace, memory_id],
    )


def namespaces() -> Query:
    return "SELECT DISTINCT namespace FROM memories ORDER BY namespace LIMIT 1000", []
