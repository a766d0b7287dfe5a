"""Rebuild speed of the projections (events/s) against raw inserts of the same data, at
three sizes 10x apart, in the same run, and how the cost per event grows from the smallest
to the largest size (against the same growth of the raw inserts).

DuckDB: the projection's batched apply (decode, dedup by event id, fold, positions, one
transaction per batch) vs a raw Arrow insert of the same rows into a plain table.
Qdrant: the projection's apply (decode, fold, embed, upsert, checkpoint) vs a raw upsert of
the same points with vectors computed beforehand.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pyarrow as pa

from bench.figures import Figure
from bench.growth import growth_figure
from memstream.core.embedding import HashingEmbedder
from memstream.core.hashing import content_hash
from memstream.core.sparse import BM25Encoder
from memstream.infra.topics import topic_names
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.port import LogRecord
from memstream.projections.qdrant_projection import QdrantProjection
from memstream.projections.retrieval import (
    CollectionSpec,
    EdgeRetrievalStore,
    LogPosition,
    MemoryPayload,
    MemoryPoint,
)
from memstream.schemas.envelope import encode, make_event
from memstream.schemas.events import MemoryCreated

SIZES = tuple(int(x) for x in os.environ.get("BENCH_REBUILD_SIZES", "1000,10000,100000").split(","))
TOPIC = "bench.memory.log"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
WORDS = [
    "kafka",
    "duckdb",
    "qdrant",
    "python",
    "rust",
    "boston",
    "denver",
    "coffee",
    "tea",
    "chess",
    "guitar",
    "travel",
    "budget",
    "release",
]


def memory_text(i: int) -> str:
    return f"User {i} likes {WORDS[i % len(WORDS)]} and {WORDS[(i * 7) % len(WORDS)]} number {i}"


def records(n: int) -> list[LogRecord]:
    out = []
    for i in range(n):
        ns = f"ns-{i % 50}"
        text = memory_text(i)
        env = make_event(
            MemoryCreated(
                memory_id=f"m{i}",
                text=text,
                category="preference",
                content_hash=content_hash(ns, text),
            ),
            namespace=ns,
            occurred_at=T0 + timedelta(seconds=i),
            event_id=f"e{i}",
        )
        out.append(LogRecord(TOPIC, i % 4, i // 4, ns.encode(), encode(env)))
    return out


def duck_rate(recs: list[LogRecord]) -> tuple[float, float]:
    proj = DuckDBProjection(":memory:", {**topic_names("bench"), "memory_log": TOPIC})
    started = time.perf_counter()
    for i in range(0, len(recs), 5000):
        proj.apply(recs[i : i + 5000])
    ours = len(recs) / (time.perf_counter() - started)
    proj.close()
    rows: list[dict[str, Any]] = [
        {
            "event_id": f"e{i}",
            "namespace": r.key.decode() if r.key else "",
            "log_offset": r.offset,
            "payload": r.value.decode(),
        }
        for i, r in enumerate(recs)
    ]
    con = duckdb.connect(":memory:")
    con.execute(
        "CREATE TABLE raw (event_id VARCHAR PRIMARY KEY, namespace VARCHAR, log_offset BIGINT, payload JSON)"
    )
    started = time.perf_counter()
    for i in range(0, len(rows), 5000):
        con.register("b", pa.Table.from_pylist(rows[i : i + 5000]))
        con.execute("INSERT INTO raw SELECT * FROM b")
        con.unregister("b")
    raw = len(rows) / (time.perf_counter() - started)
    con.close()
    return ours, raw


def qdrant_rate(recs: list[LogRecord]) -> tuple[float, float]:
    emb, sparse = HashingEmbedder(), BM25Encoder()
    spec = CollectionSpec.for_models(emb, sparse)
    store = EdgeRetrievalStore(tempfile.mkdtemp(prefix="bench-rebuild-"), spec)
    proj = QdrantProjection(store, TOPIC, emb, sparse)
    started = time.perf_counter()
    for i in range(0, len(recs), 2000):
        proj.apply(recs[i : i + 2000])
    ours = len(recs) / (time.perf_counter() - started)
    proj.close()
    raw_store = EdgeRetrievalStore(tempfile.mkdtemp(prefix="bench-raw-"), spec)
    raw_store.ensure_collection()
    texts = [memory_text(i) for i in range(len(recs))]
    vectors = emb.embed(texts)
    points = [
        MemoryPoint.build(
            memory_id=f"m{i}",
            namespace=f"ns-{i % 50}",
            dense=vectors[i],
            sparse=sparse.encode_document(texts[i]),
            payload=MemoryPayload(text=texts[i]),
            position=LogPosition(i % 4, i // 4),
        )
        for i in range(len(recs))
    ]
    started = time.perf_counter()
    for i in range(0, len(points), 2000):
        raw_store.upsert(points[i : i + 2000])
    raw = len(points) / (time.perf_counter() - started)
    raw_store.close()
    return ours, raw


def _growth(rates: list[float]) -> str:
    return "throughput ratio per 10x more events: " + ", ".join(
        f"{b / a:.2f}" for a, b in itertools.pairwise(rates)
    )


def run() -> list[Figure]:
    duck: list[tuple[int, float, float]] = []
    qdrant: list[tuple[int, float, float]] = []
    for n in SIZES:
        recs = records(n)
        duck.append((n, *duck_rate(recs)))
        qdrant.append((n, *qdrant_rate(recs)))
    duck_notes = _growth([r for _n, r, _b in duck])
    q_notes = _growth([r for _n, r, _b in qdrant])
    return [
        *(
            Figure(
                f"rebuild DuckDB @{n:,} events",
                r,
                "events/s",
                b,
                "raw Arrow insert, same rows",
                notes=duck_notes,
            )
            for n, r, b in duck
        ),
        *(
            Figure(
                f"rebuild Qdrant @{n:,} events",
                r,
                "events/s",
                b,
                "raw upsert, vectors precomputed",
                notes=q_notes,
            )
            for n, r, b in qdrant
        ),
        *(
            growth_figure(
                f"rebuild {name} cost",
                "events",
                [n for n, _r, _b in rows],
                [r for _n, r, _b in rows],
                "events/s",
                [b for _n, _r, b in rows],
                baseline,
                rate=True,
            )
            for name, rows, baseline in (
                ("DuckDB", duck, "raw Arrow insert"),
                ("Qdrant", qdrant, "raw upsert"),
            )
            if len(rows) > 1
        ),
    ]
