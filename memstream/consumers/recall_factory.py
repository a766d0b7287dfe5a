"""Wiring the recall service to a worker's projections: the Qdrant store it searches, the
DuckDB projection's kept usage and co-activation counts it scores with."""

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
        return duck.usage.usage(namespace, ids) if duck is not None else {}

    def pairs(namespace: str, ids: Sequence[str]) -> dict[tuple[str, str], int]:
        return duck.usage.together(namespace, ids) if duck is not None else {}

    return RecallService(
        projections.qdrant.store,
        embedder(settings),
        BM25Encoder(),
        usage=usage,
        pairs=pairs,
        publish=publish,
        pool=RecallPool(settings.recall_threads, settings.recall_max_pending),
        trees=(
            TreeIndex(reader(duck), duck.memory_version, duck.mirror.tree_inputs)
            if duck is not None
            else None
        ),
        retention_model="fsrs" if settings.retention_model == "fsrs" else "weibull",
    )
