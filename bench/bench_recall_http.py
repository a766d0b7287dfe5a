"""Recall latency at the HTTP boundary: ``POST /v1/recall`` to a running ``memstream
worker`` (embedded broker, default projections) holding 10k memories, p50 and p99, against
the in-process ``recall_sync`` over the same memories in the same run.

The memories are the recall benchmark's (``bench_rebuild.records``: 10k memories over 50
namespaces), published to the memory log; the worker's projections index them and the
requests start once its retrieval projection has applied them all. A request pays what a
caller pays: HTTP and JSON both ways, auth, the recall pool, the recall itself, and the
``MemoryAccessed`` event and telemetry it publishes (sent after the answer, beside the
next requests).

Requests are timed in the steady state: the memories' event time is in the past, so the
first recall of each namespace (its access event carries today's date) crosses the
namespace's event-time midnights and starts its dream cycle, tier rules and evolution
(streams/maintenance.py), once. The warm-up therefore asks every namespace once and waits
until the worker is quiet (nothing more applied by any projection for a few seconds)
before the timed requests: they measure recall, not 50 dream cycles running beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from bench.bench_rebuild import records
from bench.bench_recall import NOW, QUERIES
from bench.broker import fresh_broker
from bench.figures import Figure
from bench.live_pipeline import ROOT, publish_raw
from memstream.consumers.recall import RecallService
from memstream.core.sparse import BM25Encoder
from memstream.infra.settings import Settings
from memstream.projections.factory import embedder
from memstream.projections.qdrant_projection import QdrantProjection
from memstream.projections.retrieval import CollectionSpec, EdgeRetrievalStore
from memstream.streams.status import running_worker, wait_until_ready

SIZE = int(os.environ.get("BENCH_RECALL_HTTP_SIZE", "10000"))
REQUESTS = int(os.environ.get("BENCH_RECALL_HTTP_REQUESTS", "400"))
WARMUP = 20
NAMESPACES = 50  # the records' (bench_rebuild.records)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _body(i: int) -> dict[str, object]:
    return {"namespace": f"ns-{i % 50}", "query": QUERIES[i % len(QUERIES)], "k": 10}


@contextlib.contextmanager
def _worker(settings: Settings) -> Iterator[str]:
    """A worker with its default projections; yields its API address once ready."""
    datadir = Path(tempfile.mkdtemp(prefix="bench-http-"))
    env = dict(
        os.environ,
        MEMSTREAM_KAFKA_BOOTSTRAP=settings.bootstrap(),
        MEMSTREAM_TOPIC_PREFIX=settings.topic_prefix,
        MEMSTREAM_DATA_DIR=str(datadir / "data"),
        PYTHONPATH=str(ROOT),
    )
    started = time.time()
    with (datadir / "worker.log").open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memstream.consumers.cli", "worker", "--datadir", str(datadir)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_ready(datadir, 120, after=started)
        info = running_worker(datadir / "data")
        if info is None:
            raise RuntimeError(f"the worker recorded no API address (see {datadir}/worker.log)")
        yield str(info["api_url"])
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _wait_indexed(client: httpx.Client, n: int, timeout: float = 300.0) -> None:
    """Until every projection applied the ``n`` memories: requests are timed in the steady
    state, not while the worker is still folding the log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lag = client.get("/health").json().get("projections", {})
        if lag and all(p.get("applied", 0) >= n for k, p in lag.items() if k != "archive"):
            time.sleep(2.0)
            return
        time.sleep(0.5)
    raise TimeoutError(f"the projections did not apply {n} memories in {timeout:.0f}s")


def _wait_quiet(client: httpx.Client, quiet: float = 3.0, timeout: float = 300.0) -> None:
    """Until no projection applied anything for ``quiet`` seconds (the maintenance the
    warm-up's first recalls started, and its events, are done)."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        seen = {k: p.get("records") for k, p in client.get("/health").json()["projections"].items()}
        if seen != last:
            last, since = seen, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        time.sleep(0.5)
    raise TimeoutError(f"the worker was still applying records after {timeout:.0f}s")


def _worker_side(response: httpx.Response) -> float:
    """The worker's own time for one recall (its ``Server-Timing`` header): the recall and
    its telemetry, without HTTP, JSON and the event loop's queue. Read per timed request:
    /metrics' quantiles also hold the warm-up's recalls, which ran beside their cycles."""
    timing = response.headers.get("server-timing", "")
    return float(timing.split("dur=", 1)[1]) if "dur=" in timing else float("nan")


def _http_latencies(settings: Settings) -> tuple[list[float], list[float]]:
    recs = records(SIZE)
    topic = f"{settings.topic_prefix}.memory.log"
    asyncio.run(publish_raw(settings.bootstrap(), topic, [(r.key or b"", r.value) for r in recs]))
    with _worker(settings) as url, httpx.Client(base_url=url, timeout=30.0) as client:
        _wait_indexed(client, SIZE)
        for i in range(max(WARMUP, NAMESPACES)):  # every namespace once
            client.post("/v1/recall", json=_body(i)).raise_for_status()
        _wait_quiet(client)
        out: list[float] = []
        inside: list[float] = []
        for i in range(REQUESTS):
            started = time.perf_counter()
            response = client.post("/v1/recall", json=_body(i))
            out.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
            inside.append(_worker_side(response))
        return out, inside


def _in_process_latencies() -> list[float]:
    # the worker's default retrieval embedder: the ratio is then what the HTTP door and the
    # worker's other work add, not a cheaper embedding
    emb, sparse = embedder(Settings()), BM25Encoder()
    store = EdgeRetrievalStore(
        tempfile.mkdtemp(prefix="bench-http-base-"), CollectionSpec.for_models(emb, sparse)
    )
    projection = QdrantProjection(store, "bench.memory.log", emb, sparse)
    recs = records(SIZE)
    for i in range(0, SIZE, 5000):
        projection.apply(recs[i : i + 5000])
    service = RecallService(store, emb, sparse)
    for i in range(WARMUP):
        service.recall_sync(f"ns-{i % 50}", QUERIES[i % len(QUERIES)], k=10, now=NOW)
    out: list[float] = []
    for i in range(REQUESTS):
        started = time.perf_counter()
        service.recall_sync(f"ns-{i % 50}", QUERIES[i % len(QUERIES)], k=10, now=NOW)
        out.append((time.perf_counter() - started) * 1000)
    store.close()
    return out


def run() -> list[Figure]:
    with fresh_broker() as settings:
        http, inside = _http_latencies(settings)
    base = _in_process_latencies()
    notes = (
        f"{REQUESTS} sequential POST /v1/recall (k=10) to a running worker, {SIZE:,} memories "
        "over 50 namespaces, after a warm-up recall per namespace and its maintenance; "
        "MemoryAccessed and telemetry sent after each answer; inside the worker (the "
        f"responses' Server-Timing): p50 {statistics.median(inside):.1f} ms, "
        f"p99 {_pct(inside, 0.99):.1f} ms"
    )
    return [
        Figure(
            f"recall over HTTP p50 @{SIZE:,} memories",
            statistics.median(http),
            "ms",
            statistics.median(base),
            "in-process recall_sync, same memories and embedder",
            better="lower",
            notes=notes,
        ),
        Figure(
            f"recall over HTTP p99 @{SIZE:,} memories",
            _pct(http, 0.99),
            "ms",
            _pct(base, 0.99),
            "in-process recall_sync p99, same memories and embedder",
            better="lower",
        ),
    ]
