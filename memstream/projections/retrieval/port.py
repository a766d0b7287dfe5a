"""The retrieval store port: what the projection writes and what recall reads.

Types
    ``MemoryPoint``   one memory as the store holds it: ids, dense + sparse vectors,
                      ``MemoryPayload`` and the ``LogPosition`` that last wrote it.
                      ``MemoryPoint.build(...)`` takes the dense vector as an ndarray.
    ``Hit``           one search result with its fused score and, per channel, the
                      ``ChannelScore`` (1-based rank and raw score) that explains it.
    ``Scope``         the store-side filter of every read. Its namespace is mandatory.
    ``CollectionSpec`` names the collection after the dense embedder (name, version,
                      dim) and the sparse encoder (name, version): a new model gets a
                      fresh collection that is rebuilt from the log, never mixed vectors.

``RetrievalStore`` (ABC)::

    ensure_collection() -> None
    upsert(points: Iterable[MemoryPoint]) -> None                      # idempotent
    delete(namespace, memory_ids) -> None
    get(namespace, memory_ids, *, with_vectors=True) -> list[MemoryPoint]   # request order
    scroll(namespace, *, cursor=None, limit=256, with_vectors=False)
        -> tuple[list[MemoryPoint], str | None]                        # next cursor
    all(namespace, *, with_vectors=False) -> Iterator[MemoryPoint]
    count(namespace, *, statuses=None) -> int
    search(namespace, dense, sparse, *, limit=10, statuses=("active",), tiers=None,
           categories=None, kinds=None, valid_at=None, candidates=None, memory_ids=None,
           said_from=None, said_until=None) -> list[Hit]
    dense_search(namespace, dense, *, limit=10, <same filters>) -> list[Hit]
    sparse_search(namespace, sparse, *, limit=10, <same filters>) -> list[Hit]
    checkpoint(partition) -> int | None
    advance_checkpoint(partition, offset) -> int                       # value now stored
    close() -> None                                                    # also a context manager

Adapters implement the abstract ones plus two primitives the search methods share:
``query_channels(scope, dense, sparse, limit) -> (list[RawHit], list[RawHit])`` and
``fetch_payloads(point_ids)``. Channels may come back without payloads; the port then
reads payloads only for the ``limit`` hits that survive fusion, and re-checks the scope
on them in Python (a write between scoring and reading cannot leak a filtered point).

Tenant isolation lives here, in the data layer: every read goes through a ``Scope`` whose
namespace the adapters turn into a store-side filter condition, and point ids are
``uuid5(namespace + memory_id)`` so ``get``/``delete`` by id cannot reach another tenant's
point either (the same memory id in two namespaces is two points).

Hybrid search retrieves the dense and sparse channels separately, each filtered by the
store, and fuses them here with reciprocal rank fusion (``1 / (60 + rank)`` summed over
channels). Fusing in Python rather than with Qdrant's server-side RRF keeps each channel's
rank and score on the ``Hit``, which recall needs to explain its answers.

Validity is the half-open interval ``[valid_from, valid_until)`` in epoch seconds; a
missing bound is open. ``valid_at=t`` keeps points with ``valid_from <= t < valid_until``.
``said_from=a, said_until=b`` keeps points whose event time ``said_at`` is in ``[a, b)``
(a point without one is left out; the Qdrant projection names the field in its
collection's recipe, so a store written before it is refilled from the log).

Checkpoints (the last log offset applied, per partition; resume at ``offset + 1``) are
stored *inside the collection* as vectorless points without a namespace, written with a
conditional upsert (``offset < new``) so they only move forward even under a racing
writer. Living in the same collection means: they share the collection's write-ahead
log, so a durable checkpoint never points past data that is not; a new embedding model
gets a new collection and therefore starts from offset 0 automatically; and no sidecar
file can drift from the data. Namespace filters exclude them from every read.
"""

from __future__ import annotations

import hashlib
import math
import re
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final, Literal, Protocol, Self

import numpy as np
import orjson
from numpy.typing import NDArray

from memstream.core.sparse import SparseVector
from memstream.infra.by_identity import ByIdentity

Status = Literal["active", "superseded", "archived", "deprecated"]
STATUSES: tuple[Status, ...] = ("active", "superseded", "archived", "deprecated")

RRF_K: Final = 60
DENSE: Final = "dense"
SPARSE: Final = "sparse"

#: uuid5 namespaces; fixed forever, or every stored point id changes.
POINT_ID_NAMESPACE = uuid.UUID("6f1d4a52-8a5e-5d0c-9a53-2c1b7e0f4a11")
CHECKPOINT_ID_NAMESPACE = uuid.UUID("0b6f2e31-4c7d-5a8e-b1f0-93d2a6c4e5b7")
_POINT_NS_BYTES = POINT_ID_NAMESPACE.bytes

#: payload keys of a checkpoint point (it has no ``namespace`` key, so no Scope matches it)
CHECKPOINT_FLAG = "_checkpoint"
CHECKPOINT_PARTITION = "cp_partition"
CHECKPOINT_OFFSET = "cp_offset"

#: payload fields with a store-side index, and their kind
KEYWORD_FIELDS = ("status", "tier", "category", "kind")
RANGE_FIELDS = ("valid_from", "valid_until", "said_at")
BOOL_FIELDS = ("pinned",)
TENANT_FIELD = "namespace"

DenseInput = Sequence[float] | NDArray[np.floating[Any]]


def point_id(namespace: str, memory_id: str) -> str:
    """Deterministic Qdrant point id, ``uuid5(POINT_ID_NAMESPACE, namespace + "\x1f" +
    memory_id)``: the same memory always lands on the same point. Computed by hand
    because ``uuid.uuid5`` builds a ``UUID`` object, a third of the cost of an upsert."""
    digest = bytearray(
        hashlib.sha1(_POINT_NS_BYTES + f"{namespace}\x1f{memory_id}".encode()).digest()[:16]
    )
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def checkpoint_point_id(partition: int) -> str:
    return str(uuid.uuid5(CHECKPOINT_ID_NAMESPACE, str(partition)))


# --- data -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class LogPosition:
    partition: int
    offset: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryPayload:
    """What recall filters and shows. ``extra`` holds any other JSON-like fields (stored
    under one key, so they can never shadow the indexed ones); tuples inside ``extra``
    come back as lists."""

    text: str
    status: Status = "active"
    tier: str = "working"
    category: str = "fact"
    kind: str = "note"
    valid_from: float | None = None
    valid_until: float | None = None
    # the memory's event time (its valid_from, else when it was said), epoch seconds: a
    # question naming a time reads the memories of that span (``Scope.said_from``)
    said_at: float | None = None
    pinned: bool = False
    importance: float = 0.5
    q_value: float = 0.5
    source_turn_ids: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {self.status!r}")
        # Accept lists from callers; keep the frozen value comparable.
        object.__setattr__(self, "source_turn_ids", tuple(self.source_turn_ids))
        object.__setattr__(self, "entities", tuple(self.entities))
        object.__setattr__(self, "extra", dict(self.extra))


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryPoint:
    """One memory in the store. ``dense`` is empty (and ``sparse`` too) when read back
    without vectors."""

    memory_id: str
    namespace: str
    dense: tuple[float, ...]
    sparse: SparseVector
    payload: MemoryPayload
    position: LogPosition

    def __post_init__(self) -> None:
        _check_namespace(self.namespace)
        if not self.memory_id:
            raise ValueError("memory_id must be a non-empty string")
        if not isinstance(self.dense, tuple):
            object.__setattr__(self, "dense", _as_floats(self.dense))

    @classmethod
    def build(
        cls,
        *,
        memory_id: str,
        namespace: str,
        dense: DenseInput,
        sparse: SparseVector,
        payload: MemoryPayload,
        position: LogPosition,
    ) -> MemoryPoint:
        """Like the constructor, but takes the dense vector as any sequence or ndarray."""
        return cls(
            memory_id=memory_id,
            namespace=namespace,
            dense=_as_floats(dense),
            sparse=sparse,
            payload=payload,
            position=position,
        )

    @property
    def point_id(self) -> str:
        return point_id(self.namespace, self.memory_id)


@dataclass(frozen=True, slots=True)
class ChannelScore:
    rank: int  # 1-based, within the channel's filtered results
    score: float  # cosine for dense; BM25 (tf saturation x namespace IDF) for sparse


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    memory_id: str
    namespace: str
    score: float  # fused RRF score for search(); the channel's raw score otherwise
    payload: MemoryPayload
    position: LogPosition
    dense: ChannelScore | None = None
    sparse: ChannelScore | None = None

    def explain(self) -> dict[str, float | int | None]:
        return {
            "score": self.score,
            "dense_rank": self.dense.rank if self.dense else None,
            "dense_score": self.dense.score if self.dense else None,
            "sparse_rank": self.sparse.rank if self.sparse else None,
            "sparse_score": self.sparse.score if self.sparse else None,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Scope:
    """The filter every read carries to the store. ``None`` means "any"."""

    namespace: str
    statuses: tuple[str, ...] | None = ("active",)
    tiers: tuple[str, ...] | None = None
    categories: tuple[str, ...] | None = None
    kinds: tuple[str, ...] | None = None
    valid_at: float | None = None
    # only memories whose ``said_at`` is in [said_from, said_until) (a bound None is open)
    said_from: float | None = None
    said_until: float | None = None
    # only these memories (a category tree filter resolved to its members)
    memory_ids: tuple[str, ...] | None = None
    _ids: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)
    # admits() runs for every hit of a search: the pairs are worked out once
    _conditions: tuple[tuple[str, tuple[str, ...]], ...] = field(
        default=(), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        _check_namespace(self.namespace)
        for name in ("statuses", "tiers", "categories", "kinds", "memory_ids"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, str):
                value = (value,)
            value = tuple(value)
            if not value:
                # An empty list would match nothing; that is always a caller bug.
                raise ValueError(f"{name} must be None (any) or non-empty")
            object.__setattr__(self, name, value)
        if self.valid_at is not None and not math.isfinite(self.valid_at):
            raise ValueError("valid_at must be a finite epoch time")
        for bound in (self.said_from, self.said_until):
            if bound is not None and not math.isfinite(bound):
                raise ValueError("said_from and said_until must be finite epoch times")
        if self.memory_ids is not None:  # admits() tests each hit against them
            object.__setattr__(self, "_ids", frozenset(self.memory_ids))
        pairs = (
            ("status", self.statuses),
            ("tier", self.tiers),
            ("category", self.categories),
            ("kind", self.kinds),
            ("memory_id", self.memory_ids),
        )
        object.__setattr__(self, "_conditions", tuple((k, v) for k, v in pairs if v is not None))

    def admits(self, raw: Mapping[str, Any]) -> bool:
        """The same test in Python, on a stored payload: re-checks payloads read after the
        search (a concurrent write may have changed them in between)."""
        if raw.get(TENANT_FIELD) != self.namespace:
            return False
        for key, values in self._conditions:
            allowed = self._ids if key == "memory_id" and self._ids is not None else values
            if raw.get(key) not in allowed:
                return False
        if self.valid_at is not None:
            start, end = raw.get("valid_from"), raw.get("valid_until")
            if (start is not None and start > self.valid_at) or (
                end is not None and end <= self.valid_at
            ):
                return False
        if self.said_span:
            said = raw.get("said_at")
            if said is None:
                return False
            if (self.said_from is not None and said < self.said_from) or (
                self.said_until is not None and said >= self.said_until
            ):
                return False
        return True

    @property
    def said_span(self) -> bool:
        """Whether the scope limits ``said_at``."""
        return self.said_from is not None or self.said_until is not None

    def keyword_conditions(self) -> list[tuple[str, tuple[str, ...]]]:
        """(field, allowed values) pairs besides the namespace."""
        return list(self._conditions)


class ModelIdentity(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...


class DenseModelIdentity(ModelIdentity, Protocol):
    @property
    def dim(self) -> int: ...


_UNSAFE = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class CollectionSpec:
    dense_name: str
    dense_version: str
    dim: int
    sparse_name: str = "bm25"
    sparse_version: str = "1"
    prefix: str = "memories"

    @classmethod
    def for_models(
        cls,
        embedder: DenseModelIdentity,
        sparse: ModelIdentity,
        *,
        prefix: str = "memories",
        dense_document: str = "",
    ) -> CollectionSpec:
        """``dense_document`` names how the projection makes a point's dense vector from the
        memory (which texts, how blended): vectors of another recipe are another collection."""
        version = f"{embedder.version}+{dense_document}" if dense_document else embedder.version
        return cls(embedder.name, version, embedder.dim, sparse.name, sparse.version, prefix)

    @property
    def name(self) -> str:
        """Filesystem- and URL-safe, e.g. ``memories__hashing-v1-384__bm25-v1-k1-2-...``."""

        def slug(text: str) -> str:
            return _UNSAFE.sub("-", text.lower()).strip("-")

        dense = f"{slug(self.dense_name)}-v{slug(self.dense_version)}-{self.dim}"
        sparse = f"{slug(self.sparse_name)}-v{slug(self.sparse_version)}"
        return f"{slug(self.prefix)}__{dense}__{sparse}"


# --- helpers the adapters share -------------------------------------------------------


def _check_namespace(namespace: object) -> None:
    if not isinstance(namespace, str) or not namespace:
        raise ValueError("namespace must be a non-empty string")


def _as_floats(vector: DenseInput) -> tuple[float, ...]:
    if isinstance(vector, np.ndarray):
        return tuple(vector.astype(np.float64).ravel().tolist())
    return tuple(float(x) for x in vector)


def dense_list(vector: DenseInput, dim: int) -> list[float]:
    """A plain list of ``dim`` finite floats, or ValueError."""
    if isinstance(vector, np.ndarray):
        values: list[float] = vector.astype(np.float64).ravel().tolist()
    else:
        values = list(vector)
    if len(values) != dim:
        raise ValueError(f"dense vector has {len(values)} dims, the collection has {dim}")
    # One C-speed pass: NaN or infinity anywhere makes the sum non-finite.
    if not math.isfinite(sum(values)):
        raise ValueError("dense vector contains NaN or infinity")
    return values


#: the stored payload key of ``MemoryPayload.extra``, kept as one JSON string: the embedded
#: store converts a nested payload value by value (a memory's state, ~1.4 KB of JSON, took
#: ~0.3 ms a point to write, ~40% of the Qdrant projection's time), a string at once
EXTRA_JSON: Final = "extra_json"


def encode_payload(point: MemoryPoint) -> dict[str, Any]:
    p = point.payload
    return {
        "memory_id": point.memory_id,
        "namespace": point.namespace,
        "text": p.text,
        "status": p.status,
        "tier": p.tier,
        "category": p.category,
        "kind": p.kind,
        "valid_from": p.valid_from,
        "valid_until": p.valid_until,
        "said_at": p.said_at,
        "pinned": p.pinned,
        "importance": p.importance,
        "q_value": p.q_value,
        "source_turn_ids": list(p.source_turn_ids),
        "entities": list(p.entities),
        EXTRA_JSON: orjson.dumps(p.extra).decode(),
        "log_partition": point.position.partition,
        "log_offset": point.position.offset,
    }


def _extra_of(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """A stored payload's ``extra``: parsed from ``EXTRA_JSON``, or the mapping a payload
    written before it holds."""
    return orjson.loads(raw[EXTRA_JSON]) if EXTRA_JSON in raw else raw.get("extra") or {}


def parsed_payload(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """A stored payload with its ``extra`` parsed (one written before ``EXTRA_JSON``
    comes back as it is)."""
    if EXTRA_JSON not in raw:
        return raw
    out = {k: v for k, v in raw.items() if k != EXTRA_JSON}
    out["extra"] = _extra_of(raw)
    return out


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


#: (memory_id, namespace, payload, position) of a stored payload
Decoded = tuple[str, str, "MemoryPayload", "LogPosition"]
#: decoded payloads a store keeps (as many as the edge store's payload cache holds)
MAX_DECODED = 10_000


def decode_payload(raw: Mapping[str, Any]) -> Decoded:
    """(memory_id, namespace, payload, position) from a stored payload."""
    payload = MemoryPayload(
        text=raw["text"],
        status=raw["status"],
        tier=raw["tier"],
        category=raw["category"],
        kind=raw["kind"],
        valid_from=_opt_float(raw.get("valid_from")),
        valid_until=_opt_float(raw.get("valid_until")),
        said_at=_opt_float(raw.get("said_at")),
        pinned=bool(raw["pinned"]),
        importance=float(raw["importance"]),
        q_value=float(raw["q_value"]),
        source_turn_ids=tuple(raw.get("source_turn_ids") or ()),
        entities=tuple(raw.get("entities") or ()),
        extra=_extra_of(raw),
    )
    position = LogPosition(int(raw["log_partition"]), int(raw["log_offset"]))
    return raw["memory_id"], raw["namespace"], payload, position


def decode_point(
    raw: Mapping[str, Any], dense: Sequence[float] | None, sparse: SparseVector | None
) -> MemoryPoint:
    memory_id, namespace, payload, position = decode_payload(raw)
    return MemoryPoint(
        memory_id=memory_id,
        namespace=namespace,
        dense=tuple(dense) if dense is not None else (),
        sparse=sparse if sparse is not None else SparseVector(),
        payload=payload,
        position=position,
    )


#: a point id in whatever form is cheapest for the adapter to hash (edge: the UUID's
#: 128-bit int, qdrant-client: the string); fusion only compares them within one search.
PointKey = str | int


@dataclass(frozen=True, slots=True)
class RawHit:
    """A channel result as an adapter got it. ``payload`` may be left out: the port then
    fetches payloads only for the hits that survive fusion (most candidates do not, and
    reading payloads is the dominant cost of an in-process search)."""

    point_id: PointKey
    score: float
    payload: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Ranked:
    """A fused (or single-channel) result before its payload is attached."""

    point_id: PointKey
    score: float
    dense: ChannelScore | None
    sparse: ChannelScore | None
    payload: Mapping[str, Any] | None = None


def rank_channel(which: Literal["dense", "sparse"], raws: Sequence[RawHit]) -> list[Ranked]:
    """One channel's results, ranked as the store returned them."""
    out = []
    for rank, raw in enumerate(raws, start=1):
        channel = ChannelScore(rank, raw.score)
        out.append(
            Ranked(
                raw.point_id,
                raw.score,
                channel if which == DENSE else None,
                channel if which == SPARSE else None,
                raw.payload,
            )
        )
    return out


def fuse_rrf(
    dense: Sequence[RawHit], sparse: Sequence[RawHit], *, limit: int, k: int = RRF_K
) -> list[Ranked]:
    """Reciprocal rank fusion: ``sum(1 / (k + rank))`` over the channels a point is in.
    Ties go to the better single rank, then to the point id, so the order is stable."""
    fused: dict[PointKey, float] = {}
    best: dict[PointKey, int] = {}
    in_dense: dict[PointKey, tuple[int, RawHit]] = {}
    in_sparse: dict[PointKey, tuple[int, RawHit]] = {}
    for seen, hits in ((in_dense, dense), (in_sparse, sparse)):
        for rank, raw in enumerate(hits, start=1):
            pid = raw.point_id
            seen[pid] = (rank, raw)
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (k + rank)
            best[pid] = min(best.get(pid, rank), rank)
    order = sorted(fused, key=lambda pid: (-fused[pid], best[pid], str(pid)))
    out = []
    for pid in order[:limit]:
        d, s = in_dense.get(pid), in_sparse.get(pid)
        payload = (d[1].payload if d else None) or (s[1].payload if s else None)
        out.append(
            Ranked(
                pid,
                fused[pid],
                ChannelScore(d[0], d[1].score) if d else None,
                ChannelScore(s[0], s[1].score) if s else None,
                payload,
            )
        )
    return out


# --- the port -------------------------------------------------------------------------


class RetrievalStore(ABC):
    """A Qdrant-shaped store of memory points for one collection (one embedding model)."""

    def __init__(self, spec: CollectionSpec) -> None:
        self.spec = spec
        # a stored payload decoded: an adapter that keeps payloads between searches (the
        # edge store's cache) hands back the same objects, and decoding the candidates was
        # a sixth of an in-process recall
        self._decode: ByIdentity[Mapping[str, Any], Decoded] = ByIdentity(
            decode_payload, MAX_DECODED
        )

    @property
    def collection_name(self) -> str:
        return self.spec.name

    # writes

    @abstractmethod
    def ensure_collection(self) -> None:
        """Create the collection and its payload indices if missing; check the dim if not."""

    @abstractmethod
    def upsert(self, points: Iterable[MemoryPoint]) -> None:
        """Write points; writing the same point again leaves the same state."""

    @abstractmethod
    def delete(self, namespace: str, memory_ids: Iterable[str]) -> None:
        """Remove points; unknown ids are ignored."""

    # reads by id / enumeration

    @abstractmethod
    def get(
        self, namespace: str, memory_ids: Iterable[str], *, with_vectors: bool = True
    ) -> list[MemoryPoint]:
        """The stored points among ``memory_ids``, in request order; missing ones skipped."""

    @abstractmethod
    def scroll(
        self,
        namespace: str,
        *,
        cursor: str | None = None,
        limit: int = 256,
        with_vectors: bool = False,
    ) -> tuple[list[MemoryPoint], str | None]:
        """One page of the namespace's points (any status) and the cursor of the next."""

    def all(self, namespace: str, *, with_vectors: bool = False) -> Iterator[MemoryPoint]:
        """Every point of the namespace, any status, page by page (for rebuild diffs)."""
        cursor: str | None = None
        while True:
            page, cursor = self.scroll(namespace, cursor=cursor, with_vectors=with_vectors)
            yield from page
            if cursor is None:
                return

    @abstractmethod
    def count(self, namespace: str, *, statuses: Sequence[str] | None = None) -> int:
        """Exact number of points in the namespace (optionally of these statuses)."""

    # search

    @abstractmethod
    def query_channels(
        self,
        scope: Scope,
        dense: list[float] | None,
        sparse: SparseVector | None,
        limit: int,
    ) -> tuple[list[RawHit], list[RawHit]]:
        """Run the requested channels (``None`` = skip) under ``scope``; the adapters'
        one search primitive. The sparse channel uses IDF over ``scope.namespace``."""

    def search(
        self,
        namespace: str,
        dense: DenseInput,
        sparse: SparseVector,
        *,
        limit: int = 10,
        statuses: Sequence[str] | None = ("active",),
        tiers: Sequence[str] | None = None,
        categories: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        valid_at: float | None = None,
        candidates: int | None = None,
        memory_ids: Sequence[str] | None = None,
        said_from: float | None = None,
        said_until: float | None = None,
    ) -> list[Hit]:
        """Hybrid search: both channels under the same store-side filter, fused by RRF.

        ``candidates`` is how deep each channel is read before fusion (default
        ``max(4 * limit, 40)``): deeper finds more agreement between channels.
        ``said_from`` / ``said_until``: only memories whose event time is in that span.
        """
        scope = _scope(
            namespace,
            statuses,
            tiers,
            categories,
            kinds,
            valid_at,
            memory_ids,
            (said_from, said_until),
        )
        _check_limit(limit)
        depth = candidates if candidates is not None else max(4 * limit, 40)
        _check_limit(depth)
        dense_hits, sparse_hits = self.query_channels(
            scope, dense_list(dense, self.spec.dim), sparse if sparse else None, depth
        )
        return self._hits(scope, fuse_rrf(dense_hits, sparse_hits, limit=limit))

    def dense_search(
        self,
        namespace: str,
        dense: DenseInput,
        *,
        limit: int = 10,
        statuses: Sequence[str] | None = ("active",),
        tiers: Sequence[str] | None = None,
        categories: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        valid_at: float | None = None,
        memory_ids: Sequence[str] | None = None,
    ) -> list[Hit]:
        scope = _scope(namespace, statuses, tiers, categories, kinds, valid_at, memory_ids)
        _check_limit(limit)
        hits, _ = self.query_channels(scope, dense_list(dense, self.spec.dim), None, limit)
        return self._hits(scope, rank_channel(DENSE, hits))

    def sparse_search(
        self,
        namespace: str,
        sparse: SparseVector,
        *,
        limit: int = 10,
        statuses: Sequence[str] | None = ("active",),
        tiers: Sequence[str] | None = None,
        categories: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        valid_at: float | None = None,
        memory_ids: Sequence[str] | None = None,
    ) -> list[Hit]:
        scope = _scope(namespace, statuses, tiers, categories, kinds, valid_at, memory_ids)
        _check_limit(limit)
        if not sparse:
            return []
        _, hits = self.query_channels(scope, None, sparse, limit)
        return self._hits(scope, rank_channel(SPARSE, hits))

    @abstractmethod
    def fetch_payloads(self, point_ids: Sequence[PointKey]) -> dict[PointKey, Mapping[str, Any]]:
        """Payloads of these point ids (missing ones left out)."""

    def _hits(self, scope: Scope, ranked: Sequence[Ranked]) -> list[Hit]:
        missing = [r.point_id for r in ranked if r.payload is None]
        fetched = self.fetch_payloads(missing) if missing else {}
        hits = []
        for r in ranked:
            raw = r.payload if r.payload is not None else fetched.get(r.point_id)
            if raw is None or not scope.admits(raw):
                continue  # deleted or changed since it was scored
            memory_id, namespace, payload, position = self._decode(raw)
            hits.append(
                Hit(
                    memory_id=memory_id,
                    namespace=namespace,
                    score=r.score,
                    payload=payload,
                    position=position,
                    dense=r.dense,
                    sparse=r.sparse,
                )
            )
        return hits

    # checkpoints

    @abstractmethod
    def checkpoint(self, partition: int) -> int | None:
        """The last log offset of ``partition`` whose effects are in this collection."""

    @abstractmethod
    def advance_checkpoint(self, partition: int, offset: int) -> int:
        """Move the checkpoint to ``offset`` unless it is already further; returns the
        stored value."""

    # lifecycle

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # shared validation for adapters

    def check_point(self, point: MemoryPoint) -> list[float]:
        """The point's dense vector as a list, after checking it fits the collection."""
        return dense_list(point.dense, self.spec.dim)


def check_checkpoint_args(partition: int, offset: int | None = None) -> None:
    if isinstance(partition, bool) or not isinstance(partition, int) or partition < 0:
        raise ValueError("partition must be a non-negative int")
    if offset is not None and (
        isinstance(offset, bool) or not isinstance(offset, int) or offset < 0
    ):
        raise ValueError("offset must be a non-negative int")
    # Offsets are compared as floats by the store's range filter.
    if offset is not None and offset >= 2**53:
        raise ValueError("offset beyond 2**53 cannot be compared exactly")


def _check_limit(limit: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError("limit must be a positive int")


def _tuple_or_none(values: Sequence[str] | None) -> tuple[str, ...] | None:
    if values is None:
        return None
    return (values,) if isinstance(values, str) else tuple(values)


def _scope(
    namespace: str,
    statuses: Sequence[str] | None,
    tiers: Sequence[str] | None,
    categories: Sequence[str] | None,
    kinds: Sequence[str] | None,
    valid_at: float | None,
    memory_ids: Sequence[str] | None = None,
    said: tuple[float | None, float | None] = (None, None),
) -> Scope:
    return Scope(
        said_from=None if said[0] is None else float(said[0]),
        said_until=None if said[1] is None else float(said[1]),
        namespace=namespace,
        statuses=_tuple_or_none(statuses),
        tiers=_tuple_or_none(tiers),
        categories=_tuple_or_none(categories),
        kinds=_tuple_or_none(kinds),
        valid_at=None if valid_at is None else float(valid_at),
        memory_ids=_tuple_or_none(memory_ids),
    )
