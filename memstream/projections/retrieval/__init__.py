"""Retrieval store: hybrid (dense + BM25 sparse) search over memory points in Qdrant.

``RetrievalStore`` is the port (see ``port`` for the API and its reasons);
``EdgeRetrievalStore`` is the embedded default, ``ServerRetrievalStore`` talks to a
Qdrant server by URL.
"""

from typing import TYPE_CHECKING

from memstream.projections.retrieval.edge import EdgeRetrievalStore
from memstream.projections.retrieval.port import (
    RRF_K,
    STATUSES,
    ChannelScore,
    CollectionSpec,
    Hit,
    LogPosition,
    MemoryPayload,
    MemoryPoint,
    Ranked,
    RawHit,
    RetrievalStore,
    Scope,
    Status,
    fuse_rrf,
    point_id,
)

if TYPE_CHECKING:
    from memstream.projections.retrieval.server import ServerRetrievalStore


def __getattr__(name: str) -> object:
    # the server adapter imports qdrant-client (~1 s): only a worker with a Qdrant URL pays
    if name == "ServerRetrievalStore":
        from memstream.projections.retrieval.server import ServerRetrievalStore

        return ServerRetrievalStore
    raise AttributeError(name)


__all__ = [
    "RRF_K",
    "STATUSES",
    "ChannelScore",
    "CollectionSpec",
    "EdgeRetrievalStore",
    "Hit",
    "LogPosition",
    "MemoryPayload",
    "MemoryPoint",
    "Ranked",
    "RawHit",
    "RetrievalStore",
    "Scope",
    "ServerRetrievalStore",
    "Status",
    "fuse_rrf",
    "point_id",
]
