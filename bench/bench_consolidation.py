"""A dream cycle over many memories: wall time and peak memory, against the decay step
alone over the same memories (the cheapest full pass) in the same run."""

from __future__ import annotations

import os
import random
import time
import tracemalloc
from datetime import UTC, datetime, timedelta

from bench.bench_rebuild import WORDS
from bench.figures import Figure
from memstream.core.embedding import HashingEmbedder
from memstream.core.lifecycle import LifecycleConfig, MemoryView, plan_cycle, plan_decay

N = int(os.environ.get("BENCH_CYCLE_N", "100000"))
PER_NAMESPACE = 1000
AT = datetime(2025, 1, 1, tzinfo=UTC)
CATEGORIES = ["fact", "preference", "decision", "moment", "entity", "commitment", "skill"]


def memories(n: int) -> list[MemoryView]:
    rng = random.Random(3)
    out = []
    for i in range(n):
        w1, w2 = rng.choice(WORDS), rng.choice(WORDS)
        out.append(
            MemoryView(
                memory_id=f"m{i}",
                namespace=f"ns-{i // PER_NAMESPACE}",
                text=f"User {i % 300} likes {w1} and {w2}",
                category=rng.choice(CATEGORIES),
                created_at=AT - timedelta(days=rng.randrange(1, 400)),
                importance=rng.random(),
                confidence=rng.random(),
                q_value=rng.random(),
                access_count=rng.randrange(0, 12),
                stability=1.0 + rng.random() * 3,
            )
        )
    return out


def run() -> list[Figure]:
    views = memories(N)
    emb = HashingEmbedder()
    vectors = dict(
        zip((v.memory_id for v in views), emb.embed([v.text for v in views]), strict=True)
    )
    config = LifecycleConfig()
    by_ns: dict[str, list[MemoryView]] = {}
    for v in views:
        by_ns.setdefault(v.namespace, []).append(v)
    tracemalloc.start()
    started = time.perf_counter()
    actions = 0
    for group in by_ns.values():
        report = plan_cycle(
            group, {}, {v.memory_id: vectors[v.memory_id] for v in group}, AT, config
        )
        actions += len(report.actions)
    cycle_s = time.perf_counter() - started
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    started = time.perf_counter()
    for group in by_ns.values():
        plan_decay(group, AT, config)
    decay_s = time.perf_counter() - started
    return [
        Figure(
            f"dream cycle @{N:,} memories",
            cycle_s,
            "s",
            decay_s,
            "decay step alone",
            better="lower",
            notes=f"{len(by_ns)} namespaces of {PER_NAMESPACE}; {actions} actions planned",
        ),
        Figure(
            f"dream cycle peak memory @{N:,}",
            peak / 2**20,
            "MiB",
            None,
            "",
            better="lower",
            notes="tracemalloc peak during planning (vectors computed beforehand)",
        ),
    ]
