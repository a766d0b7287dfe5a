"""Recall latency p50/p99 (offline embedder, so no remote call) at 1k, 10k and 100k memories
against numpy brute-force dense top-k over the same vectors, how the p50 grows from the
smallest to the largest size, and throughput with concurrent requests against one request
at a time, in the same run."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial

import numpy as np

from bench.bench_rebuild import records
from bench.figures import Figure
from bench.growth import growth_figure
from memstream.consumers.recall import RecallService
from memstream.core.embedding import HashingEmbedder
from memstream.core.sparse import BM25Encoder
from memstream.projections.qdrant_projection import QdrantProjection
from memstream.projections.retrieval import CollectionSpec, EdgeRetrievalStore

SIZES = tuple(int(x) for x in os.environ.get("BENCH_RECALL_SIZES", "1000,10000,100000").split(","))
THROUGHPUT_AT = 10_000  # the size of the concurrency figure (the smallest if not measured)
QUERIES = [
    "what does the user like",
    "kafka and rust",
    "coffee or tea",
    "travel budget",
    "guitar number 42",
    "who likes chess",
    "release plans",
    "python and duckdb",
]
NOW = datetime(2024, 6, 1, tzinfo=UTC)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _one(service: RecallService, i: int) -> object:
    return service.recall_sync(f"ns-{i % 50}", QUERIES[i % len(QUERIES)], k=10, now=NOW)


def run() -> list[Figure]:
    figures: list[Figure] = []
    p50s: list[float] = []
    brute_p50s: list[float] = []
    emb, sparse = HashingEmbedder(), BM25Encoder()
    for n in SIZES:
        store = EdgeRetrievalStore(
            tempfile.mkdtemp(prefix="bench-recall-"), CollectionSpec.for_models(emb, sparse)
        )
        proj = QdrantProjection(store, "bench.memory.log", emb, sparse)
        recs = records(n)
        for i in range(0, n, 5000):
            proj.apply(recs[i : i + 5000])
        service = RecallService(store, emb, sparse)
        # namespaces hold n/50 memories each; every query is scoped to one of them
        ours: list[float] = []
        for i in range(200):
            started = time.perf_counter()
            service.recall_sync(f"ns-{i % 50}", QUERIES[i % len(QUERIES)], k=10, now=NOW)
            ours.append((time.perf_counter() - started) * 1000)
        texts = [f"User {i} likes x" for i in range(n)]  # only shapes matter for the brute force
        matrix = emb.embed(texts[: min(n, 20000)])
        matrix = np.tile(matrix, (max(1, n // len(matrix)), 1))[:n]
        ns_of = np.arange(n) % 50
        brute: list[float] = []
        for i in range(200):
            q = emb.embed([QUERIES[i % len(QUERIES)]])[0]
            started = time.perf_counter()
            mask = ns_of == (i % 50)
            scores = matrix[mask] @ q
            np.argpartition(-scores, 10)[:10]
            brute.append((time.perf_counter() - started) * 1000)
        p50s.append(statistics.median(ours))
        brute_p50s.append(statistics.median(brute))
        figures.append(
            Figure(
                f"recall p50 @{n:,} memories",
                statistics.median(ours),
                "ms",
                statistics.median(brute),
                "numpy brute-force dense top-10",
                better="lower",
                notes="full pipeline: gate, intent, hybrid search, rescoring, MMR",
            )
        )
        figures.append(
            Figure(
                f"recall p99 @{n:,} memories",
                _pct(ours, 0.99),
                "ms",
                _pct(brute, 0.99),
                "numpy brute-force dense top-10",
                better="lower",
            )
        )
        if n == (THROUGHPUT_AT if THROUGHPUT_AT in SIZES else SIZES[0]):
            m = 200
            started = time.perf_counter()
            for i in range(m):
                service.recall_sync(f"ns-{i % 50}", QUERIES[i % len(QUERIES)], k=10, now=NOW)
            serial = m / (time.perf_counter() - started)
            with ThreadPoolExecutor(8) as pool:
                started = time.perf_counter()
                list(pool.map(partial(_one, service), range(m)))
                concurrent = m / (time.perf_counter() - started)
            figures.append(
                Figure(
                    f"recall throughput, 8 concurrent @{n:,}",
                    concurrent,
                    "recalls/s",
                    serial,
                    "one request at a time",
                    notes="2 cores; the store releases the GIL in search",
                )
            )
        proj.close()
    if len(SIZES) > 1:
        figures.append(
            growth_figure(
                "recall p50",
                "memories",
                SIZES,
                p50s,
                "p50 ms",
                brute_p50s,
                "numpy brute-force dense top-10",
                rate=False,
                notes="50 namespaces, every query scoped to one (the store filters by namespace)",
            )
        )
    return figures
