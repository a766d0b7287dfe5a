"""The embedded default: Qdrant's engine in-process via qdrant-edge-py (``EdgeShard``).

One shard directory per collection, ``<root>/<CollectionSpec.name>/``. The shard keeps a
write-ahead log, so an ``update`` is recoverable after a crash; ``close()`` flushes.

Edge shards do not optimise in the background: points stay in appendable segments
(exact, payload-index-filtered search) until ``optimize()`` is called. Tenant-filtered
searches touch only one namespace's points, so that is fast at memory-store sizes; call
``optimize()`` after a bulk rebuild if collections grow large.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from memstream.core.sparse import SparseVector
from memstream.projections.retrieval.payload_cache import PayloadCache, int_id
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
    parsed_payload,
    point_id,
)

_UPSERT_CHUNK = 2048


def _namespace_condition(namespace: str) -> Any:
    return qe.FieldCondition(TENANT_FIELD, match=qe.MatchValue(namespace))


def _filter(scope: Scope) -> Any:
    must: list[Any] = [_namespace_condition(scope.namespace)]
    for key, values in scope.keyword_conditions():
        must.append(qe.FieldCondition(key, match=qe.MatchAny(list(values))))
    must_not: list[Any] = []
    if scope.valid_at is not None:
        # Null bounds never match a range, so must_not leaves open intervals in.
        must_not.append(qe.FieldCondition("valid_from", range=qe.RangeFloat(gt=scope.valid_at)))
        must_not.append(qe.FieldCondition("valid_until", range=qe.RangeFloat(lte=scope.valid_at)))
    if scope.said_span:
        must.append(
            qe.FieldCondition(
                "said_at", range=qe.RangeFloat(gte=scope.said_from, lt=scope.said_until)
            )
        )
    return qe.Filter(must=must, must_not=must_not or None)


def _namespace_filter(namespace: str, statuses: Sequence[str] | None = None) -> Any:
    must: list[Any] = [_namespace_condition(namespace)]
    if statuses is not None:
        must.append(qe.FieldCondition("status", match=qe.MatchAny(list(statuses))))
    return qe.Filter(must=must)


def _sparse_of(vector: Any) -> SparseVector | None:
    if not isinstance(vector, dict) or SPARSE not in vector:
        return None
    sv = vector[SPARSE]
    return SparseVector.of(sv.indices, sv.values)


def _dense_of(vector: Any) -> list[float] | None:
    if not isinstance(vector, dict):
        return None
    dense = vector.get(DENSE)
    return list(dense) if dense is not None else None


class EdgeRetrievalStore(RetrievalStore):
    """``RetrievalStore`` on an ``EdgeShard`` under ``root``."""

    def __init__(
        self,
        root: str | Path,
        spec: CollectionSpec,
        *,
        max_search_threads: int | None = None,
    ) -> None:
        super().__init__(spec)
        self.path = Path(root) / spec.name
        self._max_search_threads = max_search_threads
        self._shard: Any = None
        # EdgeShard calls are thread-safe, but lazy open and close must not race.
        self._lock = threading.Lock()
        # payloads read after a search, kept until a write touches them (payload_cache.py):
        # converting stored payloads was a quarter of a recall's time
        self._payloads = PayloadCache()

    # lifecycle

    def _config(self) -> Any:
        return qe.EdgeConfig(
            vectors={DENSE: qe.EdgeVectorParams(size=self.spec.dim, distance=qe.Distance.Cosine)},
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            max_search_threads=self._max_search_threads,
        )

    def ensure_collection(self) -> None:
        self._open()

    def _open(self) -> Any:
        shard = self._shard
        if shard is not None:
            return shard
        with self._lock:
            if self._shard is not None:
                return self._shard
            if (self.path / "edge_config.json").exists():
                # Passing our config makes the engine refuse a shard of another shape.
                try:
                    shard = qe.EdgeShard.load(str(self.path), self._config())
                except Exception as e:
                    raise ValueError(f"cannot open {self.path} as {self.spec}: {e}") from e
            else:
                self.path.mkdir(parents=True, exist_ok=True)
                shard = qe.EdgeShard.create(str(self.path), self._config())
            self._ensure_indexes(shard)
            self._shard = shard
            return shard

    @staticmethod
    def _ensure_indexes(shard: Any) -> None:
        existing = set(shard.info().payload_schema)
        wanted: list[tuple[str, Any]] = [(TENANT_FIELD, qe.KeywordIndexParams(is_tenant=True))]
        wanted += [(f, qe.PayloadSchemaType.Keyword) for f in KEYWORD_FIELDS]
        wanted += [(f, qe.PayloadSchemaType.Float) for f in RANGE_FIELDS]
        wanted += [(f, qe.PayloadSchemaType.Bool) for f in BOOL_FIELDS]
        for name, schema in wanted:
            if name not in existing:
                shard.update(qe.UpdateOperation.create_field_index(name, schema))

    def optimize(self) -> bool:
        """Build HNSW / merge segments now (blocking); worth it after bulk loads."""
        return bool(self._open().optimize())

    def flush(self) -> None:
        self._open().flush()

    def close(self) -> None:
        self._payloads.clear()
        with self._lock:
            if self._shard is not None:
                self._shard.flush()
                self._shard.close()
                self._shard = None

    # writes

    def upsert(self, points: Iterable[MemoryPoint]) -> None:
        shard = self._open()
        batch: list[Any] = []
        keys: list[int] = []
        for p in points:
            vector: dict[str, Any] = {DENSE: self.check_point(p)}
            if p.sparse:
                vector[SPARSE] = qe.SparseVector(list(p.sparse.indices), list(p.sparse.values))
            pid = p.point_id
            batch.append(qe.Point(pid, vector, encode_payload(p)))
            keys.append(int_id(pid))
            if len(batch) >= _UPSERT_CHUNK:
                self._write(shard, batch, keys)
                batch, keys = [], []
        if batch:
            self._write(shard, batch, keys)

    def _write(self, shard: Any, batch: list[Any], keys: list[int]) -> None:
        with self._payloads.writing(keys):
            shard.update(qe.UpdateOperation.upsert_points(batch))

    def delete(self, namespace: str, memory_ids: Iterable[str]) -> None:
        ids: list[Any] = [point_id(namespace, m) for m in memory_ids]
        if ids:
            with self._payloads.writing(int_id(str(i)) for i in ids):
                self._open().update(qe.UpdateOperation.delete_points(ids))

    # reads

    def get(
        self, namespace: str, memory_ids: Iterable[str], *, with_vectors: bool = True
    ) -> list[MemoryPoint]:
        wanted = [point_id(namespace, m) for m in memory_ids]
        if not wanted:
            return []
        records = self._open().retrieve(wanted, with_payload=True, with_vector=with_vectors)
        by_id = {}
        for r in records:
            payload = r.payload or {}
            if payload.get(TENANT_FIELD) != namespace:
                continue  # defence in depth: ids are namespaced, payloads must agree
            by_id[str(r.id)] = decode_point(payload, _dense_of(r.vector), _sparse_of(r.vector))
        return [by_id[i] for i in wanted if i in by_id]

    def scroll(
        self,
        namespace: str,
        *,
        cursor: str | None = None,
        limit: int = 256,
        with_vectors: bool = False,
    ) -> tuple[list[MemoryPoint], str | None]:
        records, next_id = self._open().scroll(
            qe.ScrollRequest(
                offset=cursor,
                limit=limit,
                filter=_namespace_filter(namespace),
                with_payload=True,
                with_vector=with_vectors,
            )
        )
        page = [
            decode_point(r.payload or {}, _dense_of(r.vector), _sparse_of(r.vector))
            for r in records
        ]
        return page, (str(next_id) if next_id is not None else None)

    def count(self, namespace: str, *, statuses: Sequence[str] | None = None) -> int:
        if isinstance(statuses, str):
            statuses = (statuses,)
        flt = _namespace_filter(namespace, statuses)
        return int(self._open().count(qe.CountRequest(exact=True, filter=flt)))

    def query_channels(
        self,
        scope: Scope,
        dense: list[float] | None,
        sparse: SparseVector | None,
        limit: int,
    ) -> tuple[list[RawHit], list[RawHit]]:
        flt = _filter(scope)
        requests = []
        if dense is not None:
            requests.append(
                qe.QueryRequest(
                    limit=limit,
                    query=qe.Query.Nearest(dense, using=DENSE),
                    filter=flt,
                    with_payload=False,
                )
            )
        if sparse:
            requests.append(
                qe.QueryRequest(
                    limit=limit,
                    query=qe.Query.Nearest(
                        qe.SparseVector(list(sparse.indices), list(sparse.values)), using=SPARSE
                    ),
                    filter=flt,
                    with_payload=False,
                    # IDF over this tenant's memories only, not the whole shard.
                    params=qe.SearchParams(
                        idf=qe.IdfParams(corpus=_namespace_filter(scope.namespace))
                    ),
                )
            )
        if not requests:
            return [], []
        shard = self._open()
        # One batch: the shard plans both channels together (one pass over segments).
        results = (
            shard.query_batch(qe.QueryBatchRequest(requests))
            if len(requests) > 1
            else [shard.query(requests[0])]
        )
        # Payloads are read afterwards for the survivors only (see RawHit).
        # UUID.__hash__ is Python code; its int hashes in C (this loop sees every candidate).
        channels = [[RawHit(p.id.int, p.score) for p in res] for res in results]
        dense_hits = channels.pop(0) if dense is not None else []
        sparse_hits = channels.pop(0) if sparse else []
        return dense_hits, sparse_hits

    def fetch_payloads(self, point_ids: Sequence[PointKey]) -> dict[PointKey, Mapping[str, Any]]:
        # only integer ids are kept: the ones searches give and writes drop
        found, missing, epoch = self._payloads.get([k for k in point_ids if isinstance(k, int)])
        missing += [k for k in point_ids if not isinstance(k, int)]
        if missing:
            ids: list[Any] = [uuid.UUID(int=k) if isinstance(k, int) else k for k in missing]
            records = self._open().retrieve(ids, with_payload=True, with_vector=False)
            # kept parsed: a recall reads the same candidates' states again and again
            fetched = {
                r.id.int: parsed_payload(r.payload) for r in records if r.payload is not None
            }
            self._payloads.keep(fetched, epoch)
            found.update(fetched)
        return found

    # checkpoints

    def checkpoint(self, partition: int) -> int | None:
        check_checkpoint_args(partition)
        records = self._open().retrieve(
            [checkpoint_point_id(partition)], with_payload=True, with_vector=False
        )
        if not records:
            return None
        return int((records[0].payload or {})[CHECKPOINT_OFFSET])

    def advance_checkpoint(self, partition: int, offset: int) -> int:
        check_checkpoint_args(partition, offset)
        point = qe.Point(
            checkpoint_point_id(partition),
            {},
            {CHECKPOINT_FLAG: True, CHECKPOINT_PARTITION: partition, CHECKPOINT_OFFSET: offset},
        )
        # Applied only if the stored offset is lower (or absent): forward-only, atomically.
        only_forward = qe.Filter(
            must=[qe.FieldCondition(CHECKPOINT_OFFSET, range=qe.RangeFloat(lt=float(offset)))]
        )
        self._open().update(qe.UpdateOperation.upsert_points([point], condition=only_forward))
        stored = self.checkpoint(partition)
        assert stored is not None
        return stored
