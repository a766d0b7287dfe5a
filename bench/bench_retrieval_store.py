"""Retrieval store: tenant-filtered search latency and upsert throughput.

Data: random unit vectors (384 dims, what the default embedder produces), 100 tenants,
80% of points "active", 6-10 BM25 terms each from a Zipf-distributed 20k vocabulary.
Every search carries the store's default filter (namespace + status "active").

Baselines, measured in the same run on the same data and queries:
- numpy brute force over the tenant's active rows (boolean mask per query, then a
  matrix-vector product and a partial sort): the "no database" answer;
- qdrant-client local mode through the same port (10k only: it is pure Python);
- for upserts, the raw ``EdgeShard`` with pre-built points and payload dicts, i.e. the
  engine without this project's wrapper (id derivation, validation, payload encoding).

``BENCH_1M=1`` adds a 1M-point run (about 3 GB of RAM and several minutes).
"""

from __future__ import annotations

import gc
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe
from numpy.typing import NDArray

from bench.figures import Figure
from memstream.core.sparse import SparseVector
from memstream.projections.retrieval import (
    CollectionSpec,
    EdgeRetrievalStore,
    LogPosition,
    MemoryPayload,
    MemoryPoint,
    RetrievalStore,
    ServerRetrievalStore,
)
from memstream.projections.retrieval.port import DENSE, SPARSE, encode_payload

DIM = 384
TENANTS = 100
VOCAB = 20_000
LIMIT = 10
SPEC = CollectionSpec("bench-random", "1", DIM)


@dataclass
class Data:
    vectors: NDArray[np.float32]
    tenant: NDArray[np.int64]
    active: NDArray[np.bool_]
    terms: list[tuple[int, ...]]

    def __len__(self) -> int:
        return len(self.vectors)

    def point(self, i: int) -> MemoryPoint:
        terms = self.terms[i]
        return MemoryPoint.build(
            memory_id=f"m{i}",
            namespace=f"tenant-{self.tenant[i]}",
            dense=self.vectors[i],
            sparse=SparseVector(terms, tuple(1.0 for _ in terms)),
            payload=MemoryPayload(
                text=f"memory {i}",
                status="active" if self.active[i] else "superseded",
                tier=("core", "working", "peripheral")[i % 3],
                category=("fact", "preference", "decision")[i % 3],
            ),
            position=LogPosition(0, i),
        )

    def points(self, start: int = 0, stop: int | None = None) -> Iterator[MemoryPoint]:
        for i in range(start, len(self) if stop is None else stop):
            yield self.point(i)


def make_data(n: int, seed: int) -> Data:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, DIM), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    tenant = rng.integers(0, TENANTS, n)
    active = rng.random(n) < 0.8
    lengths = rng.integers(6, 11, n)
    raw = (rng.zipf(1.2, int(lengths.sum())) - 1) % VOCAB
    terms, pos = [], 0
    for length in lengths:
        terms.append(tuple(sorted({int(t) for t in raw[pos : pos + length]})))
        pos += length
    return Data(vectors, tenant, active, terms)


@dataclass
class Queries:
    tenants: list[int]
    vectors: NDArray[np.float32]
    sparse: list[SparseVector]


def make_queries(count: int, seed: int) -> Queries:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, DIM), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sparse = []
    for _ in range(count):
        terms = sorted({int(t) for t in (rng.zipf(1.2, 3) - 1) % VOCAB})
        sparse.append(SparseVector(tuple(terms), tuple(1.0 for _ in terms)))
    return Queries([int(t) for t in rng.integers(0, TENANTS, count)], vectors, sparse)


def latencies_ms(
    runs: dict[str, Callable[[int], object]], count: int, warmup: int = 20
) -> dict[str, NDArray[np.float64]]:
    """Per-query latencies of each system, interleaved query by query so that load from
    other processes on a shared machine hits every system alike."""
    for i in range(min(warmup, count)):
        for run in runs.values():
            run(i)
    gc.collect()
    out = {name: np.empty(count) for name in runs}
    for i in range(count):
        for name, run in runs.items():
            started = time.perf_counter_ns()
            run(i)
            out[name][i] = (time.perf_counter_ns() - started) / 1e6
    return out


def numpy_search(data: Data, tenant: int, query: NDArray[np.float32], k: int) -> NDArray[np.intp]:
    rows = np.flatnonzero((data.tenant == tenant) & data.active)
    scores = data.vectors[rows] @ query
    if len(rows) <= k:
        return rows[np.argsort(-scores)]
    top = np.argpartition(-scores, k)[:k]
    return rows[top[np.argsort(-scores[top])]]


def p(values: NDArray[np.float64], q: float) -> float:
    return float(np.percentile(values, q))


def upsert_rates(store: EdgeRetrievalStore, raw_path: Path, data: Data) -> tuple[float, float]:
    """Points/s through the port (from ready ``MemoryPoint``s) and of a bare ``EdgeShard``
    fed pre-built ids, vector lists and payload dicts: the engine without this project's
    wrapper. Chunks alternate between the two so machine load hits both alike."""
    shard = qe.EdgeShard.create(
        str(raw_path),
        qe.EdgeConfig(
            vectors={DENSE: qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        ),
    )
    adapter_s = raw_s = 0.0
    chunk = 10_000
    for start in range(0, len(data), chunk):
        stop = min(start + chunk, len(data))
        points = list(data.points(start, stop))
        ids = [p.point_id for p in points]
        payloads = [encode_payload(p) for p in points]
        vectors = data.vectors[start:stop].tolist()
        gc.collect()
        started = time.perf_counter()
        store.upsert(points)
        adapter_s += time.perf_counter() - started
        started = time.perf_counter()
        for lo in range(0, stop - start, 2048):
            batch = []
            for j in range(lo, min(lo + 2048, stop - start)):
                terms = list(data.terms[start + j])
                vector: dict[str, Any] = {
                    DENSE: vectors[j],
                    SPARSE: qe.SparseVector(terms, [1.0] * len(terms)),
                }
                batch.append(qe.Point(ids[j], vector, payloads[j]))
            shard.update(qe.UpdateOperation.upsert_points(batch))
        raw_s += time.perf_counter() - started
    shard.close()
    return len(data) / adapter_s, len(data) / raw_s


@dataclass
class SizeResult:
    n: int
    dense: NDArray[np.float64]
    hybrid: NDArray[np.float64]
    numpy: NDArray[np.float64]
    upsert: float
    raw_upsert: float


def measure_size(
    root: Path, n: int, query_count: int
) -> tuple[SizeResult, EdgeRetrievalStore, Data, Queries]:
    data = make_data(n, seed=n)
    queries = make_queries(query_count, seed=n + 1)
    store = EdgeRetrievalStore(root / f"edge-{n}", SPEC)
    store.ensure_collection()
    upsert, raw_upsert = upsert_rates(store, root / f"raw-{n}", data)

    def ns(i: int) -> str:
        return f"tenant-{queries.tenants[i]}"

    timings = latencies_ms(
        {
            "dense": lambda i: store.dense_search(ns(i), queries.vectors[i], limit=LIMIT),
            "hybrid": lambda i: store.search(
                ns(i), queries.vectors[i], queries.sparse[i], limit=LIMIT
            ),
            "numpy": lambda i: numpy_search(data, queries.tenants[i], queries.vectors[i], LIMIT),
        },
        query_count,
    )
    # Same answers as brute force (exact search in unoptimised segments): a sanity check
    # that the two sides of the comparison do the same work.
    for i in range(5):
        got = [h.memory_id for h in store.dense_search(ns(i), queries.vectors[i], limit=LIMIT)]
        want = [f"m{j}" for j in numpy_search(data, queries.tenants[i], queries.vectors[i], LIMIT)]
        if got != want:
            raise AssertionError(f"edge and numpy disagree at {n}: {got} != {want}")
    result = SizeResult(
        n, timings["dense"], timings["hybrid"], timings["numpy"], upsert, raw_upsert
    )
    return result, store, data, queries


def label(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k"


def run() -> list[Figure]:
    sizes = [10_000, 100_000] + ([1_000_000] if os.environ.get("BENCH_1M") == "1" else [])
    query_counts = {10_000: 500, 100_000: 300, 1_000_000: 200}
    figures: list[Figure] = []
    results: list[SizeResult] = []
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as tmp:
        root = Path(tmp)
        for n in sizes:
            result, store, data, queries = measure_size(root, n, query_counts[n])
            results.append(result)
            if n == 10_000:
                figures += local_mode_figures(store, data, queries)
            store.close()
            del data, queries
            gc.collect()

    first = results[0]
    for r in results:
        tag = label(r.n)
        per_tenant = r.n // TENANTS
        growth = ""
        if r is not first:
            growth = (
                f"; growth {label(first.n)}->{tag} (x{r.n // first.n} points): "
                f"edge p50 x{p(r.dense, 50) / p(first.dense, 50):.1f}, "
                f"hybrid p50 x{p(r.hybrid, 50) / p(first.hybrid, 50):.1f}, "
                f"numpy p50 x{p(r.numpy, 50) / p(first.numpy, 50):.1f}, "
                f"upsert rate x{r.upsert / first.upsert:.2f}"
            )
        common = f"{r.n} points, {TENANTS} tenants (~{per_tenant}/tenant), 80% active, k={LIMIT}"
        figures += [
            Figure(
                f"retrieval edge dense search p50 @{tag}",
                p(r.dense, 50),
                "ms",
                p(r.numpy, 50),
                "numpy brute force, same filter",
                "lower",
                common + growth,
            ),
            Figure(
                f"retrieval edge dense search p99 @{tag}",
                p(r.dense, 99),
                "ms",
                p(r.numpy, 99),
                "numpy brute force, same filter",
                "lower",
                common,
            ),
            Figure(
                f"retrieval edge hybrid search p50 @{tag}",
                p(r.hybrid, 50),
                "ms",
                p(r.dense, 50),
                "edge dense-only search",
                "lower",
                common + "; dense + BM25 (tenant IDF) channels, RRF in Python, payloads for "
                f"the top {LIMIT} only; p99 {p(r.hybrid, 99):.2f} ms",
            ),
            Figure(
                f"retrieval edge upsert @{tag}",
                r.upsert,
                "points/s",
                r.raw_upsert,
                "raw EdgeShard upsert, pre-built points",
                "higher",
                f"{r.n} points, batches of 2048, 10k-point chunks alternating adapter/raw; "
                "adapter time includes point ids, validation and payload encoding",
            ),
        ]
    return figures


def local_mode_figures(edge: RetrievalStore, data: Data, queries: Queries) -> list[Figure]:
    local = ServerRetrievalStore(SPEC, path=":memory:")
    local.ensure_collection()
    local.upsert(data.points())
    count = 100  # local mode is pure Python; fewer queries keep the run short

    def ns(i: int) -> str:
        return f"tenant-{queries.tenants[i]}"

    def dense(store: RetrievalStore) -> Callable[[int], object]:
        return lambda i: store.dense_search(ns(i), queries.vectors[i], limit=LIMIT)

    def hybrid(store: RetrievalStore) -> Callable[[int], object]:
        return lambda i: store.search(ns(i), queries.vectors[i], queries.sparse[i], limit=LIMIT)

    t = latencies_ms(
        {
            "edge dense": dense(edge),
            "local dense": dense(local),
            "edge hybrid": hybrid(edge),
            "local hybrid": hybrid(local),
        },
        count,
        warmup=5,
    )
    local.close()
    return [
        Figure(
            f"retrieval edge {kind} search p50 @10k vs local mode",
            p(t[f"edge {kind}"], 50),
            "ms",
            p(t[f"local {kind}"], 50),
            "qdrant-client local mode, same port",
            "lower",
            f"{count} queries; local mode p99 {p(t[f'local {kind}'], 99):.1f} ms, "
            f"edge p99 {p(t[f'edge {kind}'], 99):.2f} ms",
        )
        for kind in ("dense", "hybrid")
    ]
