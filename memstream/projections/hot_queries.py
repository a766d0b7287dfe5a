"""The hot memory block's queries on the analytics projection, shared by the context call
(consumers/http_context.py), ``memstream verify`` (the blocks of the live and the rebuilt
projection must match) and the context benchmark. The block itself is a pure function of
these rows (core/hot_memory.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from memstream.core.hot_memory import _DONE, HotConfig, build_hot, render

COLUMNS = (
    "memory_id, text, category, kind, status, slot, subject, importance, q_value, "
    "valid_from, valid_until, created_at, updated_at, session_id, metadata"
)

# Bounded candidate rows per section, so the call costs the same at 100 or 100k memories.
CANDIDATES = f"""
WITH m AS (SELECT {COLUMNS} FROM memories WHERE namespace = ? AND status = 'active'),
u AS (SELECT memory_id, count(*) AS access_count FROM access_hits
      WHERE namespace = ? GROUP BY memory_id),
c AS (SELECT m.*, coalesce(u.access_count, 0) AS access_count FROM m LEFT JOIN u USING (memory_id))
SELECT * FROM (SELECT * FROM c WHERE slot IS NOT NULL ORDER BY updated_at DESC, memory_id LIMIT 100)
UNION SELECT * FROM (SELECT * FROM c WHERE category IN ('correction', 'principle', 'decision')
                     ORDER BY importance DESC, memory_id LIMIT 40)
UNION SELECT * FROM (SELECT * FROM c WHERE category = 'commitment'
                     ORDER BY coalesce(valid_from, created_at) DESC, memory_id LIMIT 50)
UNION SELECT * FROM (SELECT * FROM c WHERE category = 'preference'
                     ORDER BY importance + q_value DESC, memory_id LIMIT 16)
UNION SELECT * FROM (SELECT * FROM c WHERE category <> 'summary'
                     ORDER BY coalesce(valid_from, created_at) DESC, memory_id LIMIT 12)
UNION SELECT * FROM (SELECT * FROM c WHERE q_value >= 0.8 AND access_count >= 10
                     ORDER BY q_value DESC, memory_id LIMIT 15)
UNION SELECT * FROM (SELECT * FROM c WHERE session_id = ?
                     ORDER BY updated_at DESC, memory_id LIMIT 30)
UNION SELECT * FROM (SELECT * FROM c WHERE coalesce(metadata, '') <> ''
                     ORDER BY updated_at DESC, memory_id LIMIT 20)
UNION SELECT * FROM (SELECT * FROM c WHERE regexp_matches(text, ?)
                     ORDER BY updated_at DESC, memory_id LIMIT 100)
"""
NOW = "SELECT max(updated_at) AS now FROM memories WHERE namespace = ?"


def params(namespace: str, session_id: str | None) -> list[Any]:
    """CANDIDATES' parameters, in the order of its placeholders."""
    return [namespace, namespace, session_id or "", "(?i)" + _DONE.pattern]


def block_digest(
    query: Callable[[str, list[Any]], list[dict[str, Any]]], namespace: str, config: HotConfig
) -> str:
    """A hash of the namespace's rendered hot block (no session), for ``memstream verify``."""
    rows = query(CANDIDATES, params(namespace, None))
    now_rows = query(NOW, [namespace])
    now = now_rows[0]["now"] if now_rows else None
    block = build_hot(namespace, rows, now, config, None)
    return hashlib.sha1(render(block).encode()).hexdigest()
