"""Wiring the recall service to a worker's projections: the Qdrant store it searches, the
DuckDB usage and co-activation statistics it scores with."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memstream.consumers.recall import Publisher, RecallService
from memstream.consumers.recall_pool import RecallPool
from memstream.core.sparse import BM25Encoder
from memstream.infra.settings import Settings
from memstream.projections.factory import embedder
from memstream.projections.tree_queries import TreeIndex, reader


def recall_service_for(
    settings: Settings, projections: Any, publish: Publisher | None
) -> RecallService:
    duck = projections.duckdb

    def usage(namespace: str, ids: Sequence[str]) -> dict[str, tuple[int, datetime | None]]:
        if duck is None:
            return {}
        _cols, rows = duck.user_query(
            "SELECT memory_id, access_count, last_access FROM memory_usage "
            "WHERE namespace = ? AND memory_id IN (SELECT unnest(?::VARCHAR[]))",
            10_000,
            [namespace, list(ids)],
        )
        return {mid: (int(n), last) for mid, n, last in rows}

    def pairs(namespace: str, ids: Sequence[str]) -> dict[tuple[str, str], int]:
        if duck is None:
            return {}
        _cols, rows = duck.user_query(
            "SELECT a.memory_id, b.memory_id, count(*) FROM access_hits a JOIN access_hits b "
            "ON a.event_id = b.event_id AND a.memory_id < b.memory_id "
            "WHERE a.namespace = ? AND a.memory_id IN (SELECT unnest(?::VARCHAR[])) "
            "AND b.memory_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY ALL",
            10_000,
            [namespace, list(ids), list(ids)],
        )
        return {(a, b): int(n) for a, b, n in rows}

    return RecallService(
        projections.qdrant.store,
        embedder(settings),
        BM25Encoder(),
        usage=usage,
        pairs=pairs,
        publish=publish,
        pool=RecallPool(settings.recall_threads, settings.recall_max_pending),
        trees=TreeIndex(reader(duck)) if duck is not None else None,
        retention_model="fsrs" if settings.retention_model == "fsrs" else "weibull",
    )
