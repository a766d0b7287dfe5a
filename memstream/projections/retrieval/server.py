"""``RetrievalStore`` on a Qdrant server through qdrant-client (never the default).

``ServerRetrievalStore(spec, url="http://qdrant:6333")`` talks to a server;
``path=...`` (or ``":memory:"``) uses qdrant-client's local mode, which speaks the same
API and is what the contract tests run against. Local mode searches by brute force and
ignores payload indices (they are still declared, for the server's sake).

Needs a Qdrant server that supports conditional upserts (``update_filter``, 1.16+) for
forward-only checkpoints, and scoped IDF (``SearchParams.idf``) for the sparse channel.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient
from qdrant_client import models as qm

from memstream.core.sparse import SparseVector
from memstream.projections.retrieval.port import (
    BOOL_FIELDS,
    CHECKPOINT_FLAG,
    CHECKPOINT_OFFSET,
    CHECKPOINT_PARTITION,
    DENSE,
    KEYWORD_FIELDS,
    RANGE_FIELDS,
    SPARSE,
    TENANT_FIELD,
    CollectionSpec,
    MemoryPoint,
    PointKey,
    RawHit,
    RetrievalStore,
    Scope,
    check_checkpoint_args,
    checkpoint_point_id,
    decode_point,
    encode_payload,
    point_id,
)

_UPSERT_CHUNK = 512


def _namespace_condition(namespace: str) -> qm.FieldCondition:
    return qm.FieldCondition(key=TENANT_FIELD, match=qm.MatchValue(value=namespace))


def _filter(scope: Scope) -> qm.Filter:
    must: list[qm.Condition] = [_namespace_condition(scope.namespace)]
    for key, values in scope.keyword_conditions():
        must.append(qm.FieldCondition(key=key, match=qm.MatchAny(any=list(values))))
    must_not: list[qm.Condition] = []
    if scope.valid_at is not None:
        # Null bounds never match a range, so must_not leaves open intervals in.
        must_not.append(qm.FieldCondition(key="valid_from", range=qm.Range(gt=scope.valid_at)))
        must_not.append(qm.FieldCondition(key="valid_until", range=qm.Range(lte=scope.valid_at)))
    if scope.said_span:
        must.append(
            qm.FieldCondition(
                key="said_at", range=qm.Range(gte=scope.said_from, lt=scope.said_until)
            )
        )
    return qm.Filter(must=must, must_not=must_not or None)


def _namespace_filter(namespace: str, statuses: Sequence[str] | None = None) -> qm.Filter:
    must: list[qm.Condition] = [_namespace_condition(namespace)]
    if statuses is not None:
        must.append(qm.FieldCondition(key="status", match=qm.MatchAny(any=list(statuses))))
    return qm.Filter(must=must)


def _vectors_of(vector: Any) -> tuple[list[float] | None, SparseVector | None]:
    if not isinstance(vector, dict):
        return None, None
    dense = vector.get(DENSE)
    sparse = vector.get(SPARSE)
    return (
        [float(x) for x in dense] if dense is not None else None,
        SparseVector.of(sparse.indices, sparse.values) if sparse is not None else None,
    )


class ServerRetrievalStore(RetrievalStore):
    """One collection on a Qdrant server (or in qdrant-client's local mode)."""

    def __init__(
        self,
        spec: CollectionSpec,
        *,
        url: str | None = None,
        path: str | Path | None = None,
        api_key: str | None = None,
        client: QdrantClient | None = None,
        timeout: int | None = None,
    ) -> None:
        super().__init__(spec)
        if sum(x is not None for x in (url, path, client)) != 1:
            raise ValueError("pass exactly one of url=, path= or client=")
        self._owns_client = client is None
        if client is not None:
            self._client = client
        elif url is not None:
            self._client = QdrantClient(url=url, api_key=api_key, timeout=timeout)
        elif str(path) == ":memory:":
            self._client = QdrantClient(location=":memory:")
        else:
            self._client = QdrantClient(path=str(path))
        self._ready = False

    @property
    def client(self) -> QdrantClient:
        return self._client

    # lifecycle

    def ensure_collection(self) -> None:
        name = self.collection_name
        if self._client.collection_exists(name):
            params = self._client.get_collection(name).config.params
            vectors = params.vectors
            dense = vectors.get(DENSE) if isinstance(vectors, dict) else None
            if dense is None or dense.size != self.spec.dim:
                size = dense.size if dense is not None else None
                raise ValueError(
                    f"collection {name} has dense size {size}, spec says {self.spec.dim}"
                )
        else:
            self._client.create_collection(
                name,
                vectors_config={
                    DENSE: qm.VectorParams(size=self.spec.dim, distance=qm.Distance.COSINE)
                },
                sparse_vectors_config={SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
            )
        self._ensure_indexes()
        self._ready = True

    def _ensure_indexes(self) -> None:
        name = self.collection_name
        schema = self._client.get_collection(name).payload_schema or {}
        wanted: list[tuple[str, qm.PayloadSchemaType | qm.KeywordIndexParams]] = [
            (TENANT_FIELD, qm.KeywordIndexParams(type=qm.KeywordIndexType.KEYWORD, is_tenant=True))
        ]
        wanted += [(f, qm.PayloadSchemaType.KEYWORD) for f in KEYWORD_FIELDS]
        wanted += [(f, qm.PayloadSchemaType.FLOAT) for f in RANGE_FIELDS]
        wanted += [(f, qm.PayloadSchemaType.BOOL) for f in BOOL_FIELDS]
        with warnings.catch_warnings():
            # Local mode warns that indices have no effect there; a server uses them.
            warnings.simplefilter("ignore", UserWarning)
            for field, field_schema in wanted:
                if field not in schema:
                    self._client.create_payload_index(
                        name, field, field_schema=field_schema, wait=True
                    )

    def _c(self) -> QdrantClient:
        if not self._ready:
            self.ensure_collection()
        return self._client

    def close(self) -> None:
        if self._owns_client:
            self._client.close()
        self._ready = False

    # writes

    def upsert(self, points: Iterable[MemoryPoint]) -> None:
        client = self._c()
        batch: list[qm.PointStruct] = []
        for p in points:
            vector: dict[str, Any] = {DENSE: self.check_point(p)}
            if p.sparse:
                vector[SPARSE] = qm.SparseVector(
                    indices=list(p.sparse.indices), values=list(p.sparse.values)
                )
            batch.append(qm.PointStruct(id=p.point_id, vector=vector, payload=encode_payload(p)))
            if len(batch) >= _UPSERT_CHUNK:
                client.upsert(self.collection_name, batch, wait=True)
                batch = []
        if batch:
            client.upsert(self.collection_name, batch, wait=True)

    def delete(self, namespace: str, memory_ids: Iterable[str]) -> None:
        ids: list[qm.ExtendedPointId] = [point_id(namespace, m) for m in memory_ids]
        if ids:
            self._c().delete(self.collection_name, qm.PointIdsList(points=ids), wait=True)

    # reads

    def get(
        self, namespace: str, memory_ids: Iterable[str], *, with_vectors: bool = True
    ) -> list[MemoryPoint]:
        wanted = [point_id(namespace, m) for m in memory_ids]
        if not wanted:
            return []
        records = self._c().retrieve(
            self.collection_name, list(wanted), with_payload=True, with_vectors=with_vectors
        )
        by_id = {}
        for r in records:
            payload = r.payload or {}
            if payload.get(TENANT_FIELD) != namespace:
                continue  # defence in depth: ids are namespaced, payloads must agree
            dense, sparse = _vectors_of(r.vector)
            by_id[str(r.id)] = decode_point(payload, dense, sparse)
        return [by_id[i] for i in wanted if i in by_id]

    def scroll(
        self,
        namespace: str,
        *,
        cursor: str | None = None,
        limit: int = 256,
        with_vectors: bool = False,
    ) -> tuple[list[MemoryPoint], str | None]:
        records, next_id = self._c().scroll(
            self.collection_name,
            scroll_filter=_namespace_filter(namespace),
            limit=limit,
            offset=cursor,
            with_payload=True,
            with_vectors=with_vectors,
        )
        page = []
        for r in records:
            dense, sparse = _vectors_of(r.vector)
            page.append(decode_point(r.payload or {}, dense, sparse))
        return page, (str(next_id) if next_id is not None else None)

    def count(self, namespace: str, *, statuses: Sequence[str] | None = None) -> int:
        if isinstance(statuses, str):
            statuses = (statuses,)
        result = self._c().count(
            self.collection_name, count_filter=_namespace_filter(namespace, statuses), exact=True
        )
        return int(result.count)

    def query_channels(
        self,
        scope: Scope,
        dense: list[float] | None,
        sparse: SparseVector | None,
        limit: int,
    ) -> tuple[list[RawHit], list[RawHit]]:
        flt = _filter(scope)
        requests: list[qm.QueryRequest] = []
        if dense is not None:
            requests.append(
                qm.QueryRequest(
                    query=dense, using=DENSE, filter=flt, limit=limit, with_payload=True
                )
            )
        if sparse:
            requests.append(
                qm.QueryRequest(
                    query=qm.SparseVector(indices=list(sparse.indices), values=list(sparse.values)),
                    using=SPARSE,
                    filter=flt,
                    limit=limit,
                    with_payload=True,
                    # IDF over this tenant's memories only, not the whole collection.
                    params=qm.SearchParams(
                        idf=qm.IdfCorpusParams(corpus=_namespace_filter(scope.namespace))
                    ),
                )
            )
        if not requests:
            return [], []
        # One round trip for both channels, payloads included: over a network a second
        # round trip for the survivors' payloads would cost more than it saves.
        responses = self._c().query_batch_points(self.collection_name, requests)
        channels = [
            [RawHit(str(p.id), p.score, p.payload) for p in response.points]
            for response in responses
        ]
        dense_hits = channels.pop(0) if dense is not None else []
        sparse_hits = channels.pop(0) if sparse else []
        return dense_hits, sparse_hits

    def fetch_payloads(self, point_ids: Sequence[PointKey]) -> dict[PointKey, Mapping[str, Any]]:
        ids: list[qm.ExtendedPointId] = [str(p) for p in point_ids]
        records = self._c().retrieve(
            self.collection_name, ids, with_payload=True, with_vectors=False
        )
        return {str(r.id): r.payload for r in records if r.payload is not None}

    # checkpoints

    def checkpoint(self, partition: int) -> int | None:
        check_checkpoint_args(partition)
        records = self._c().retrieve(
            self.collection_name, [checkpoint_point_id(partition)], with_payload=True
        )
        if not records:
            return None
        return int((records[0].payload or {})[CHECKPOINT_OFFSET])

    def advance_checkpoint(self, partition: int, offset: int) -> int:
        check_checkpoint_args(partition, offset)
        point = qm.PointStruct(
            id=checkpoint_point_id(partition),
            vector={},
            payload={
                CHECKPOINT_FLAG: True,
                CHECKPOINT_PARTITION: partition,
                CHECKPOINT_OFFSET: offset,
            },
        )
        # Applied only if the stored offset is lower (or absent): forward-only, atomically.
        only_forward = qm.Filter(
            must=[qm.FieldCondition(key=CHECKPOINT_OFFSET, range=qm.Range(lt=float(offset)))]
        )
        self._c().upsert(self.collection_name, [point], wait=True, update_filter=only_forward)
        stored = self.checkpoint(partition)
        assert stored is not None
        return stored
