"""Restart time: a partition's state from its snapshot plus the log's tail, against folding
the partition's memory log from offset 0, in the same run (``streams/partition_state.py``).

One partition of the memory log holds N memories (MemoryCreated events of a hundred
namespaces over a year, each with its content hash and text: the gate re-embeds every text
on a fold) on a fresh embedded broker. Measured: ``load_partition`` from call to a state the
write path can serve — from offset 0 (snapshots off), and from the snapshot the previous
load wrote plus a tail of 1,000 new events (the namespaces left packed until asked for,
``streams/lazy_namespaces.py``; the first use of one of them is reported beside). The worker's HTTP API is up in ~2 s either way,
and the projections keep their own positions on disk, so this load is what a restart waits
for before a new turn can be extracted. Goal: <= 5 s at 1M and flat in history length.
``BENCH_RESTART_SIZES`` (comma-separated, default ``10000,100000``) chooses N.

Flat in history length: the same 10,000 memories after ten times as many events (each
memory reinforced nine times after its creation, as recalls do), restarted the same way,
against the restart after their creation alone (``BENCH_RESTART_HISTORY``, default 10;
0 skips it): a snapshot holds the state, so the restart should not grow with the events
that led to it, while the fold from offset 0 does.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from aiokafka import AIOKafkaProducer

from bench.broker import fresh_broker
from bench.figures import Figure
from bench.workload import TOPIC_WORDS as _WORDS
from memstream.core.embedding import HashingEmbedder
from memstream.core.hashing import content_hash
from memstream.schemas import MemoryCreated, MemoryReinforced, encode, make_event
from memstream.schemas.envelope import DEFAULT_LIMITS
from memstream.schemas.topics import BY_ROLE
from memstream.streams.partition_state import SnapshotStore, load_partition

SIZES = [int(x) for x in os.environ.get("BENCH_RESTART_SIZES", "10000,100000").split(",") if x]
HISTORY = int(os.environ.get("BENCH_RESTART_HISTORY", "10"))
HISTORY_MEMORIES = 10_000
TAIL = 1000
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _event(i: int) -> bytes:
    ns = f"ns-{i % 100}"
    text = f"Person {i % 977} talked about {_WORDS[i % 12]} and {_WORDS[(i * 7) % 12]} on day {i}"
    at = T0 + timedelta(seconds=i * 30)
    env = make_event(
        MemoryCreated(
            memory_id=f"m-{i}",
            text=text,
            category="fact",
            content_hash=content_hash(ns, text),
            source_turn_ids=[f"t-{i}"],
            entities=[f"Person {i % 977}"],
        ),
        namespace=ns,
        occurred_at=at,
        causation_id=f"c-{i}",
        event_id=f"e-{i}",
    )
    return encode(env)


def _reinforced(k: int, n: int) -> bytes:
    """The k-th reinforcement of one of the first n memories (a recall's co-activation)."""
    i = k % n
    env = make_event(
        MemoryReinforced(
            memory_id=f"m-{i}",
            stability_before=1.0 + k // n,
            stability_after=2.0 + k // n,
            reason="coactivation",
        ),
        namespace=f"ns-{i % 100}",
        occurred_at=T0 + timedelta(days=400, seconds=k),
        event_id=f"r-{k}",
    )
    return encode(env)


async def _write(
    bootstrap: str, topic: str, start: int, stop: int, event: Callable[[int], bytes] = _event
) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
    await producer.start()
    try:
        batch = []
        for i in range(start, stop):
            batch.append(producer.send(topic, event(i), partition=0))
            if len(batch) >= 2000:
                await asyncio.gather(*batch)
                batch = []
        await asyncio.gather(*batch)
    finally:
        await producer.stop()


async def _load(bootstrap: str, topic: str, store: SnapshotStore | None) -> tuple[float, Any]:
    started = time.perf_counter()
    state = await load_partition(
        bootstrap, topic, 0, HashingEmbedder(), DEFAULT_LIMITS, idle=0.2, snapshots=store
    )
    return time.perf_counter() - started, state


async def _measure(settings: Any, n: int, history: int = 1) -> tuple[float, float, float, float]:
    """(fold from 0, snapshot + tail, the snapshot write, the first use of a namespace) in
    seconds for n memories, after ``history`` times n events (the rest reinforcements)."""
    topic = BY_ROLE["memory_log"].name(settings.topic_prefix)
    await _write(settings.bootstrap(), topic, 0, n)
    if history > 1:
        await _write(settings.bootstrap(), topic, 0, (history - 1) * n, lambda k: _reinforced(k, n))
    store = SnapshotStore(
        tempfile.mkdtemp(prefix="memstream-snap-"), topic, lambda: "bench", HashingEmbedder()
    )
    cold, _ = await _load(settings.bootstrap(), topic, None)
    first, _ = await _load(settings.bootstrap(), topic, store)  # folds and writes one
    write_cost = first - cold
    await _write(settings.bootstrap(), topic, n, n + TAIL)
    # the median of three restarts (single loads of one state varied by ~0.2 s across runs)
    loads = [await _load(settings.bootstrap(), topic, store) for _ in range(3)]
    warm, state = sorted(loads, key=lambda load: load[0])[1]
    # the namespaces stay packed until asked for (streams/lazy_namespaces.py): the first
    # turn of a namespace after the restart waits for its unpacking and its tail
    started = time.perf_counter()
    state.memory("ns-0")
    first_use = time.perf_counter() - started
    assert sum(len(m.states) for m in state.namespaces.values()) == n + TAIL
    return cold, warm, max(write_cost, 0.0), first_use


def run() -> list[Figure]:
    figures = []
    for n in SIZES:
        with fresh_broker(partitions=1) as settings:
            cold, warm, write_cost, first_use = asyncio.run(_measure(settings, n))
        figures.append(
            Figure(
                f"restart to serving recall @{n:,} memories",
                warm,
                "s",
                cold,
                "the same partition folded from offset 0",
                better="lower",
                notes=(
                    f"partition state from its snapshot + {TAIL} new events; the first use of "
                    f"one of its 100 namespaces then {first_use * 1000:.0f} ms (unpacked with "
                    f"its tail); the load that wrote the snapshot took ~{write_cost:.1f} s "
                    "more than the fold alone"
                ),
            )
        )
    if HISTORY > 1:
        n = HISTORY_MEMORIES
        with fresh_broker(partitions=1) as settings:
            short = asyncio.run(_measure(settings, n))
        with fresh_broker(partitions=1) as settings:
            long = asyncio.run(_measure(settings, n, HISTORY))
        figures.append(
            Figure(
                f"restart to serving recall @{n:,} memories after {HISTORY * n:,} events",
                long[1],
                "s",
                short[1],
                f"the same memories after their {n:,} creations alone",
                better="lower",
                notes=(
                    f"each memory reinforced {HISTORY - 1} times after its creation; snapshot + "
                    f"{TAIL} new events either way; folded from offset 0: {long[0]:.2f} s after "
                    f"{HISTORY * n:,} events, {short[0]:.2f} s after {n:,}"
                ),
            )
        )
    return figures


if __name__ == "__main__":
    for f in run():
        print(
            f"{f.name}: {f.value:.2f} {f.unit} (fold from 0: {f.baseline:.2f}, x{f.ratio:.3f})  {f.notes}"
        )
