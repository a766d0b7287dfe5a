"""Write-path throughput (rule extractor) against faust's consume-only ceiling and a raw
aiokafka consume-and-produce loop, all on one fresh broker in the same run; and how its cost
grows: the same measurement at three sizes 10x apart, a fresh broker for each (the embedded
broker's memory only grows).

Every session's last turn is a decision (an urgent signal), so every buffer is flushed by
its own turn as the stream ends, not by the wall-clock idle rule: the rate is the turns
covered by ``TurnsExtracted`` events over the span of their ``recorded_at``, with no idle
tail (the baselines have none; at the smallest size it would dominate).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from bench.broker import fresh_broker
from bench.figures import Figure
from bench.growth import growth_figure
from bench.live_pipeline import (
    ROOT,
    collect,
    publish_raw,
    raw_baseline,
    recorded_at,
    worker_process,
)
from bench.workload import turns
from memstream.consumers.producer import turn_event
from memstream.schemas.envelope import Envelope, encode

N = int(os.environ.get("BENCH_WRITE_N", "10000"))  # the size of the baseline figures
SIZES = tuple(int(x) for x in os.environ.get("BENCH_WRITE_SIZES", "1000,10000,100000").split(","))
NAMESPACES, SESSIONS = 16, 64  # passed to the workload, so the closing turns match its sessions
T0 = datetime(2024, 1, 1, tzinfo=UTC)  # the workload's first turn


def faust_ceiling(bootstrap: str, topic: str, n: int) -> float:
    out = Path(tempfile.mkdtemp()) / "ceiling.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.faust_ceiling", bootstrap, topic, str(n), str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 180
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        data = orjson.loads(out.read_bytes())
        return float(data["n"]) / float(data["last"] - data["first"])
    finally:
        proc.terminate()
        proc.wait(20)


def closing_turns(n: int) -> list[Envelope[Any]]:
    """After ``n`` workload turns, one decision per session: it flushes the session's buffer."""
    return [
        turn_event(
            namespace=f"bench-ns-{s % NAMESPACES}",
            session_id=f"s{s}",
            turn_id=f"close-{s}",
            role="user",
            speaker="Ann",
            text="We decided to use Kafka for the staging environment after a long comparison.",
            occurred_at=T0 + timedelta(seconds=10 * (n + s)),
        )
        for s in range(SESSIONS)
    ]


def extraction_rate(flushes: list[dict[str, Any]]) -> float:
    """Turns covered by the flushes over the span of their ``recorded_at``."""
    stamps = [recorded_at(f) for f in flushes]
    span = max(stamps) - min(stamps) if stamps else 0.0
    return sum(len(f["payload"]["turns"]) for f in flushes) / span if span > 0 else 0.0


def measure(n: int, ceiling: bool) -> tuple[float, float, float | None, int]:
    """(write path turns/s, raw loop turns/s, faust consume-only turns/s, turns covered) for
    ``n`` workload turns and the closing turns, on a fresh broker."""
    records = [
        (e.key, encode(e))
        for e in [*turns(n, namespaces=NAMESPACES, sessions=SESSIONS), *closing_turns(n)]
    ]
    total = len(records)
    with fresh_broker() as settings:
        source = f"{settings.topic_prefix}.turns"
        asyncio.run(publish_raw(settings.bootstrap(), source, records))
        raw = raw_baseline(settings, source, total)
        faust = faust_ceiling(settings.bootstrap(), source, total) if ceiling else None
        with worker_process(settings, MEMSTREAM_BUFFER_IDLE_SECONDS="1"):
            flushes = asyncio.run(
                collect(
                    settings,
                    frozenset({"TurnsExtracted"}),
                    lambda f: len(f["payload"]["turns"]),
                    total,
                )
            )
    covered = sum(len(f["payload"]["turns"]) for f in flushes)
    return extraction_rate(flushes), raw, faust, covered


def average_size(n: int) -> float:
    return sum(len(encode(e)) for e in turns(n, namespaces=NAMESPACES, sessions=SESSIONS)) / n


def run() -> list[Figure]:
    sizes = sorted({*SIZES, N})
    results = {n: measure(n, ceiling=n == N) for n in sizes}
    rate, raw, ceiling, _covered = results[N]
    note = (
        f"{N} turns of {average_size(min(N, 2000)):.0f} bytes on average and a closing "
        f"decision in each of the {SESSIONS} sessions (so no buffer waits for the idle rule), "
        "4 partitions, one worker, rule extractor, projections off"
    )
    short = {n: c for n, (_r, _b, _c, c) in results.items() if c < n + SESSIONS}
    if short:
        note += (
            "; only "
            + ", ".join(f"{c} of {n + SESSIONS}" for n, c in short.items())
            + " turns covered before the timeout"
        )
    return [
        Figure(
            "write path turns/s vs faust consume-only",
            rate,
            "turns/s",
            ceiling,
            "faust consume-only agent (take_events)",
            notes=note,
        ),
        Figure(
            "write path turns/s vs raw loop",
            rate,
            "turns/s",
            raw,
            "raw aiokafka consume-and-produce loop",
            notes=note,
        ),
        growth_figure(
            "ingest cost",
            "turns",
            sizes,
            [results[n][0] for n in sizes],
            "turns/s",
            [results[n][1] for n in sizes],
            "raw aiokafka consume-and-produce loop",
            rate=True,
            notes="write path turns/s, one worker, a fresh broker per size; the turns span "
            "10 s of event time each, so the daily dream cycle runs as the log covers more days",
        ),
    ]
