"""Building projections from settings: which store, where, with which models."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from memstream.core.embedding import Embedder, embedder_for
from memstream.core.sparse import BM25Encoder
from memstream.infra.settings import Settings
from memstream.infra.topics import topic_names
from memstream.projections.archive import ParquetArchive
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.layout import Layout
from memstream.projections.port import Projection
from memstream.projections.qdrant_projection import QdrantProjection, collection_spec
from memstream.projections.retrieval import (
    EdgeRetrievalStore,
    RetrievalStore,
)

ALL = ("duckdb", "qdrant", "archive")


@lru_cache(maxsize=4)
def _embedder(kind: str, model: str | None, dim: int | None) -> Embedder:
    return embedder_for(kind, model, dim)


def embedder(settings: Settings) -> Embedder:
    """The retrieval embedder (``MEMSTREAM_EMBEDDER``), one instance per process (a model
    loads once): the Qdrant projection and recall embed with it."""
    return _embedder(settings.embedder, settings.embed_model, settings.embed_dim)


def gate_embedder(settings: Settings) -> Embedder:
    """The write path's and the dream cycle's embedder (``MEMSTREAM_GATE_EMBEDDER``): the
    near-duplicate gate's thresholds belong to it. Same as the retrieval one when they
    name the same kind (then one instance serves both)."""
    if settings.gate_embedder == settings.embedder:
        return embedder(settings)
    return _embedder(settings.gate_embedder, None, None)


def retrieval_store(settings: Settings, root: Path | None = None) -> RetrievalStore:
    """Qdrant server when ``qdrant_url`` is set, otherwise the embedded engine under ``root``.
    The collection is named by the embedder and the vectors' recipe: switching either fills a
    fresh one from the log."""
    spec = collection_spec(embedder(settings), BM25Encoder())
    if settings.qdrant_url:
        from memstream.projections.retrieval.server import ServerRetrievalStore

        return ServerRetrievalStore(spec, url=settings.qdrant_url)
    return EdgeRetrievalStore(root or Layout(settings.data_path).qdrant(), spec)


def topics_of(kind: str, settings: Settings) -> list[str]:
    names = topic_names(settings.topic_prefix)
    if kind == "qdrant":
        return [names["memory_log"]]
    return list(names.values())


def telemetry_topics(settings: Settings) -> list[str]:
    """What each recall leaves behind (its access event, its workflow record): a projection
    may gather these before applying them (``projection_telemetry_wait_seconds``)."""
    names = topic_names(settings.topic_prefix)
    return [names["access"], names["workflows"]]


def build(kind: str, settings: Settings, version: str | None = None) -> Projection:
    layout = Layout(settings.data_path)
    if kind == "duckdb":
        return DuckDBProjection(
            layout.duckdb(version),
            topic_names(settings.topic_prefix),
            settings.limits,
            memory_limit=settings.duckdb_memory_limit,
            threads=settings.duckdb_threads,
        )
    if kind == "qdrant":
        root = layout.qdrant(version) if version else None
        return QdrantProjection(
            retrieval_store(settings, root),
            topic_names(settings.topic_prefix)["memory_log"],
            embedder(settings),
            BM25Encoder(),
            settings.limits,
            partitions=settings.partitions,
        )
    if kind == "archive":
        return ParquetArchive(layout.archive)
    raise ValueError(f"unknown projection {kind!r}; choose from {', '.join(ALL)}")
