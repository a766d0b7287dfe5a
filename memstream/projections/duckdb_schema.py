"""DuckDB tables and views of the analytics projection.

Raw tables keep every event of a topic (typed columns plus the JSON payload); derived
tables are folds (``memories``) or per-event extracts (``searches``, ``access_hits``);
views answer the questions analysts ask. Views compute "now" as the newest event time in
their table, so a rebuild from the log answers exactly like the live projection.
"""

from __future__ import annotations

ENVELOPE_COLUMNS = """
    event_id VARCHAR PRIMARY KEY,
    type VARCHAR NOT NULL,
    schema_version INTEGER NOT NULL,
    occurred_at TIMESTAMPTZ NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL,
    namespace VARCHAR NOT NULL,
    session_id VARCHAR,
    causation_id VARCHAR,
    correlation_id VARCHAR,
    producer VARCHAR,
    log_partition INTEGER NOT NULL,
    log_offset BIGINT NOT NULL,
"""

TABLES: dict[str, str] = {
    "_positions": """
        topic VARCHAR NOT NULL, log_partition INTEGER NOT NULL, next_offset BIGINT NOT NULL,
        PRIMARY KEY (topic, log_partition)""",
    "turns": ENVELOPE_COLUMNS
    + "turn_id VARCHAR, role VARCHAR, speaker VARCHAR, text VARCHAR, payload JSON",
    "access": ENVELOPE_COLUMNS
    + "query_id VARCHAR, query VARCHAR, top_score DOUBLE, result_count INTEGER, "
    "source VARCHAR, payload JSON",
    "feedback": ENVELOPE_COLUMNS
    + "query_id VARCHAR, outcome VARCHAR, reward DOUBLE, memory_ids VARCHAR[], "
    "reason VARCHAR, payload JSON",
    "workflows": ENVELOPE_COLUMNS
    + "workflow VARCHAR, outcome VARCHAR, detail VARCHAR, payload JSON",
    "recall_requests": ENVELOPE_COLUMNS
    + "query_id VARCHAR, query VARCHAR, k INTEGER, payload JSON",
    "recall_replies": ENVELOPE_COLUMNS
    + "query_id VARCHAR, result_count INTEGER, error VARCHAR, payload JSON",
    "memory_log": ENVELOPE_COLUMNS + "memory_id VARCHAR, payload JSON",
    "dead_letters": """
        topic VARCHAR NOT NULL, log_partition INTEGER NOT NULL, log_offset BIGINT NOT NULL,
        reason VARCHAR, message VARCHAR, path VARCHAR, source_topic VARCHAR, source_partition INTEGER,
        source_offset BIGINT, agent VARCHAR, failed_at TIMESTAMPTZ, original BLOB,
        PRIMARY KEY (topic, log_partition, log_offset)""",
    "projection_rejects": """
        topic VARCHAR NOT NULL, log_partition INTEGER NOT NULL, log_offset BIGINT NOT NULL,
        reason VARCHAR, original BLOB, PRIMARY KEY (topic, log_partition, log_offset)""",
    "searches": """
        event_id VARCHAR PRIMARY KEY, namespace VARCHAR NOT NULL, occurred_at TIMESTAMPTZ NOT NULL,
        query_id VARCHAR, query VARCHAR, topic VARCHAR, top_score DOUBLE, result_count INTEGER, source VARCHAR""",
    "access_hits": """
        event_id VARCHAR NOT NULL, namespace VARCHAR NOT NULL, memory_id VARCHAR NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL, query_id VARCHAR, rank INTEGER, score DOUBLE,
        PRIMARY KEY (event_id, memory_id)""",
    "memories": """
        namespace VARCHAR NOT NULL, memory_id VARCHAR NOT NULL, session_id VARCHAR, text VARCHAR,
        category VARCHAR, kind VARCHAR, status VARCHAR, tier VARCHAR, importance DOUBLE, confidence DOUBLE,
        arousal DOUBLE, stability DOUBLE, q_value DOUBLE, entities VARCHAR[], valid_from TIMESTAMPTZ,
        valid_until TIMESTAMPTZ, content_hash VARCHAR, source_turn_ids VARCHAR[], created_at TIMESTAMPTZ,
        updated_at TIMESTAMPTZ, pinned BOOLEAN, immutable BOOLEAN, subject VARCHAR, slot VARCHAR, superseded_by VARCHAR,
        merged_into VARCHAR, tagged_until TIMESTAMPTZ, reinforcements INTEGER, last_q_update TIMESTAMPTZ,
        version INTEGER, last_event_id VARCHAR, metadata VARCHAR, relations VARCHAR[],
        unhelpful_for VARCHAR[],
        PRIMARY KEY (namespace, memory_id)""",
    # live typed edges between memories (RelationAdded less RelationRemoved; core/relations.py)
    "relations": """
        namespace VARCHAR NOT NULL, source_id VARCHAR NOT NULL, target_id VARCHAR NOT NULL,
        relation VARCHAR NOT NULL, confidence DOUBLE NOT NULL, rule VARCHAR, added_at TIMESTAMPTZ,
        event_id VARCHAR, PRIMARY KEY (namespace, source_id, target_id, relation)""",
}

#: Gap threshold: a topic whose average top score stays under this is answered poorly.
GAP_SCORE_THRESHOLD = 0.35
GAP_MIN_SEARCHES = 3

VIEWS: dict[str, str] = {
    "q_history": """
        SELECT namespace, memory_id, occurred_at,
               CAST(payload->>'old_q' AS DOUBLE) AS old_q, CAST(payload->>'new_q' AS DOUBLE) AS new_q,
               CAST(payload->>'reward' AS DOUBLE) AS reward, CAST(payload->>'weight' AS DOUBLE) AS weight,
               payload->>'feedback_event_id' AS feedback_event_id, event_id
        FROM memory_log WHERE type = 'QValueUpdated'""",
    "workflow_observations": """
        SELECT namespace, workflow, outcome, detail, occurred_at, event_id FROM workflows""",
    "memory_usage": """
        SELECT namespace, memory_id, count(*) AS access_count, max(occurred_at) AS last_access
        FROM access_hits GROUP BY namespace, memory_id""",
    "memory_view": """
        SELECT m.*, coalesce(u.access_count, 0) AS access_count, u.last_access
        FROM memories m LEFT JOIN memory_usage u USING (namespace, memory_id)""",
    "gap_report": f"""
        WITH ref AS (SELECT max(occurred_at) AS now FROM searches),
        recent AS (
            SELECT s.* FROM searches s, ref WHERE s.occurred_at >= ref.now - INTERVAL 30 DAY
        )
        SELECT namespace, topic, count(*) AS searches, round(avg(coalesce(top_score, 0)), 4) AS avg_top_score,
               count(*) FILTER (WHERE coalesce(result_count, 0) = 0) AS empty_results,
               list(DISTINCT query)[1:3] AS example_queries, max(occurred_at) AS last_searched,
               'Document "' || topic || '": asked ' || count(*) || ' times in 30 days, average top score '
                   || round(avg(coalesce(top_score, 0)), 2) || '. Add a note or a source that answers it.'
                   AS suggestion
        FROM recent GROUP BY namespace, topic
        HAVING count(*) >= {GAP_MIN_SEARCHES} AND avg(coalesce(top_score, 0)) < {GAP_SCORE_THRESHOLD}
        ORDER BY searches DESC, avg_top_score ASC""",
    "workflow_health": """
        WITH ref AS (SELECT max(occurred_at) AS now FROM workflows),
        w AS (
            SELECT namespace, workflow, outcome, occurred_at >= ref.now - INTERVAL 7 DAY AS in7,
                   occurred_at >= ref.now - INTERVAL 30 DAY AS in30
            FROM workflows, ref
        )
        SELECT namespace, workflow,
               count(*) FILTER (WHERE in7 AND outcome = 'success') AS success_7d,
               count(*) FILTER (WHERE in7 AND outcome = 'failure') AS failure_7d,
               count(*) FILTER (WHERE in7 AND outcome = 'corrected') AS corrected_7d,
               count(*) FILTER (WHERE in7 AND outcome = 'missed') AS missed_7d,
               count(*) FILTER (WHERE in30 AND outcome = 'success') AS success_30d,
               count(*) FILTER (WHERE in30 AND outcome = 'failure') AS failure_30d,
               count(*) FILTER (WHERE in30 AND outcome = 'corrected') AS corrected_30d,
               count(*) FILTER (WHERE in30 AND outcome = 'missed') AS missed_30d,
               round(count(*) FILTER (WHERE in7 AND outcome = 'success')
                     / greatest(count(*) FILTER (WHERE in7), 1), 4) AS success_rate_7d,
               CASE WHEN count(*) FILTER (WHERE in7) < 3 THEN 'insufficient'
                    WHEN count(*) FILTER (WHERE in7 AND outcome <> 'success')
                             > 0.3 * count(*) FILTER (WHERE in7)
                    THEN 'degraded' ELSE 'healthy' END AS status
        FROM w GROUP BY namespace, workflow ORDER BY namespace, workflow""",
    "workflow_evidence": """
        SELECT w.namespace, w.workflow, w.outcome, w.detail, w.occurred_at, w.event_id
        FROM workflows w JOIN workflow_health h USING (namespace, workflow)
        WHERE h.status = 'degraded' AND w.outcome <> 'success'
        ORDER BY w.namespace, w.workflow, w.occurred_at DESC""",
    "q_distribution": """
        SELECT namespace, floor(q_value * 10) / 10 AS q_bucket, count(*) AS memories
        FROM memories WHERE status = 'active' GROUP BY ALL ORDER BY namespace, q_bucket""",
    "tier_distribution": """
        SELECT namespace, tier, status, count(*) AS memories FROM memories GROUP BY ALL
        ORDER BY namespace, tier, status""",
    "evolution_candidates": """
        WITH ref AS (SELECT greatest(max(updated_at), (SELECT max(occurred_at) FROM access_hits)) AS now
                     FROM memories),
        v AS (SELECT mv.*, ref.now FROM memory_view mv, ref WHERE mv.status = 'active' AND NOT mv.pinned)
        SELECT namespace, memory_id, text, q_value, access_count, last_access,
               CASE WHEN q_value < 0.2 AND access_count >= 10 THEN 'critical'
                    WHEN q_value < 0.3 AND access_count >= 5 THEN 'high'
                    ELSE 'stale' END AS level,
               CASE WHEN q_value < 0.2 AND access_count >= 10 THEN 'deprecate'
                    WHEN q_value < 0.3 AND access_count >= 5 THEN 'refine'
                    ELSE 'archive' END AS action
        FROM v
        WHERE (q_value < 0.2 AND access_count >= 10) OR (q_value < 0.3 AND access_count >= 5)
           OR coalesce(last_access, created_at) < now - INTERVAL 90 DAY
        ORDER BY namespace, level, q_value""",
}
