"""Building projections from settings: which store, where, with which models."""

from __future__ import annotations

from pathlib import Path

from core.embedding import HashingEmbedder
from core.sparse import BM25Encoder
from infra.settings import Settings
from infra.topics import topic_names
from projections.archive import ParquetArchive
from projections.duckdb_projection import DuckDBProjection
from projections.layout import Layout
from projections.port import Projection
from projections.qdrant_projection import QdrantProjection
from projections.retrieval import (
    CollectionSpec,
    EdgeRetrievalStore,
    RetrievalStore,
    ServerRetrievalStore,
)

ALL = ("duckdb", "qdrant", "archive")


def retrieval_store(settings: Settings, root: Path | None = None) -> RetrievalStore:
    """Qdrant server when ``qdrant_url`` is set, otherwise the embedded engine under ``root``."""
    spec = CollectionSpec.for_models(HashingEmbedder(), BM25Encoder())
    if settings.qdrant_url:
        return ServerRetrievalStore(spec, url=settings.qdrant_url)
    return EdgeRetrievalStore(root or Layout(settings.data_path).qdrant(), spec)


def topics_of(kind: str, settings: Settings) -> list[str]:
    names = topic_names(settings.topic_prefix)
    if kind == "qdrant":
        return [names["memory_log"]]
    return list(names.values())


def build(kind: str, settings: Settings, version: str | None = None) -> Projection:
    layout = Layout(settings.data_path)
    if kind == "duckdb":
        return DuckDBProjection(
            layout.duckdb(version), topic_names(settings.topic_prefix), settings.limits
        )
    if kind == "qdrant":
        root = layout.qdrant(version) if version else None
        return QdrantProjection(
            retrieval_store(settings, root),
            topic_names(settings.topic_prefix)["memory_log"],
            HashingEmbedder(),
            BM25Encoder(),
            settings.limits,
            partitions=settings.partitions,
        )
    if kind == "archive":
        return ParquetArchive(layout.archive)
    raise ValueError(f"unknown projection {kind!r}; choose from {', '.join(ALL)}")
