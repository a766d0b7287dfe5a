"""The context call at 10k memories in one namespace, computed after a change.

What ``POST /v1/context`` does without a query (consumers/http_context.py): the namespace's
hot block (core/hot_memory.build_hot over the candidate rows the projection keeps in memory,
projections/hot_index.py) and its category tree (from the groups the projection keeps,
projections/memory_mirror.py), assembled within the budget. The namespace holds 10,000
active memories of every section's kind (identity and profile slots, preferences,
commitments, some done, lessons, links and commands, plain facts), over a year of event
time, plus 40 other namespaces beside it. Before each timed call the projection applies one
change of the namespace (a new memory; every fifth an update, every seventh a forget), so
no cache answers: this is what an agent whose turns are extracted between its context calls
pays. Baseline, same run and same changes: the same block and tree from the bounded queries
(hot_queries.CANDIDATES and NOW, tree_queries.load_tree), which is how they were computed
before. Every call checks that both give the same block and tree. Goal: p50 <= 5 ms.

The route keeps a namespace's block until the projection applies anything of it:
``context call hot block p50, namespace unchanged`` is that path (``ContextRoutes.hot``) on
repeated calls.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.figures import Figure
from bench.workload import TOPIC_WORDS as _WORDS
from memstream.consumers.http_context import ContextRoutes
from memstream.core.context_block import assemble
from memstream.core.hashing import content_hash
from memstream.core.hot_memory import build_hot, render
from memstream.infra.settings import Settings
from memstream.infra.topics import topic_names
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.hot_queries import CANDIDATES as _CANDIDATES
from memstream.projections.hot_queries import NOW as _NOW
from memstream.projections.hot_queries import params as _params
from memstream.projections.port import LogRecord
from memstream.projections.tree_queries import load_tree, reader
from memstream.schemas import (
    MemoryArchived,
    MemoryCreated,
    MemoryUpdated,
    encode,
    make_event,
)

N = int(os.environ.get("BENCH_CONTEXT_N", "10000"))
CALLS = 100
NS = "ctx-bench"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
TOPIC = "bench.memory.log"

_KINDS: list[tuple[str, str | None, str]] = [
    ("fact", "name", "Owner's name is Dana Reyes"),
    ("fact", "location", "Dana lives in Valencia"),
    ("preference", None, "Dana prefers {w} for {v}"),
    ("commitment", None, "Dana will send the {w} report to {v} by Friday"),
    ("fact", None, "Dana sent the {w} report to {v}"),
    ("principle", None, "Always {w} before {v}"),
    ("fact", None, "The {w} runbook is at https://wiki.example.org/{v}, run `make {w}`"),
    ("fact", None, "Dana talked about {w} and {v} with the team"),
]


def _records(n: int) -> list[LogRecord]:
    rng = random.Random(7)
    out: list[LogRecord] = []
    spaces = [NS] * n + [f"other-{i % 40}" for i in range(n // 2)]
    for i, ns in enumerate(spaces):
        category, slot, template = _KINDS[0 if i < 2 else 2 + rng.randrange(len(_KINDS) - 2)]
        if i == 1:
            category, slot, template = _KINDS[1]
        text = template.format(w=rng.choice(_WORDS), v=f"{rng.choice(_WORDS)}-{i}")
        env = make_event(
            MemoryCreated(
                memory_id=f"m{i}",
                text=text,
                category=category,  # type: ignore[arg-type]
                content_hash=content_hash(ns, text),
                subject="dana",
                slot=slot,
                importance=round(rng.random(), 3),
                metadata={"url": [f"https://wiki.example.org/{i}"]} if "wiki" in text else {},
            ),
            namespace=ns,
            occurred_at=T0 + timedelta(minutes=53 * i),
            event_id=f"e{i}",
        )
        out.append(LogRecord(TOPIC, i % 4, i // 4, ns.encode(), encode(env)))
    return out


def _block(proj: DuckDBProjection, sql: str, params: list[Any]) -> str:
    columns, rows = proj.user_query(sql, 100_000, params)
    memories = [dict(zip(columns, r, strict=True)) for r in rows]
    _, now_rows = proj.user_query(_NOW, 1, [NS])
    return render(build_hot(NS, memories, now_rows[0][0]))


class _Memory:
    """What ContextRoutes reads of the HTTP memory routes: the projection and its queries."""

    def __init__(self, proj: DuckDBProjection) -> None:
        self.proj = proj
        self.settings = Settings()

    def _duck(self) -> DuckDBProjection:
        return self.proj

    async def _query(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        return self.proj.rows(sql, params)


def _change(i: int, offset: int) -> LogRecord:
    """One change of the namespace: a new memory, every fifth an update of an older one,
    every seventh a forget."""
    at = T0 + timedelta(minutes=53 * (N + N // 2) + i)
    payload: Any
    if i % 7 == 3:
        payload = MemoryArchived(memory_id=f"m{2 + (i * 7919) % (N - 2)}", rule="forget")
    elif i % 5 == 1:
        text = f"Dana finished the {_WORDS[i % len(_WORDS)]} review {i}"
        payload = MemoryUpdated(
            memory_id=f"m{2 + (i * 104729) % (N - 2)}",
            text=text,
            previous_text="",
            content_hash=content_hash(NS, text),
        )
    else:
        text = f"Dana will send the {_WORDS[i % len(_WORDS)]} draft to Ana by Monday {i}"
        payload = MemoryCreated(
            memory_id=f"new{i}",
            text=text,
            category="commitment",
            content_hash=content_hash(NS, text),
            subject="dana",
            importance=0.5,
        )
    env = make_event(payload, namespace=NS, occurred_at=at, event_id=f"c{i}")
    return LogRecord(TOPIC, 0, offset, NS.encode(), encode(env))


def _kept(proj: DuckDBProjection) -> list[float]:
    """Repeated context calls' hot block through the route, nothing applied in between."""
    routes = ContextRoutes(_Memory(proj))

    async def calls() -> list[float]:
        out = []
        for _ in range(CALLS):
            started = time.perf_counter()
            await routes.hot(NS, None)
            out.append((time.perf_counter() - started) * 1000)
        return out

    return asyncio.run(calls())


def _after_changes(proj: DuckDBProjection) -> dict[str, list[float]]:
    """Each call after one change: the route's block and whole call, and the queries'."""
    routes = ContextRoutes(_Memory(proj))
    query = reader(proj)
    times: dict[str, list[float]] = {"hot": [], "call": [], "sql hot": [], "sql call": []}

    async def calls() -> None:
        await routes.hot(NS, None)  # the first call reads the namespace into the indexes
        await routes.tree(NS)
        offset = N  # past the partition-0 offsets _records used
        for i in range(CALLS):
            proj.apply([_change(i, offset + i)])
            started = time.perf_counter()
            hot = await routes.hot(NS, None)
            times["hot"].append((time.perf_counter() - started) * 1000)
            tree = await routes.tree(NS)
            assemble(hot, [], 1000, None, tree).as_dict()
            times["call"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            from_sql = _block(proj, _CANDIDATES, _params(NS, None))
            times["sql hot"].append((time.perf_counter() - started) * 1000)
            sql_tree = load_tree(query, NS).render()
            times["sql call"].append((time.perf_counter() - started) * 1000)
            assert render(hot) == from_sql and tree == sql_tree, i

    asyncio.run(calls())
    return times


def run() -> list[Figure]:
    proj = DuckDBProjection(":memory:", {**topic_names("bench"), "memory_log": TOPIC})
    try:
        recs = _records(N)
        for i in range(0, len(recs), 5000):
            proj.apply(recs[i : i + 5000])
        assert "Dana" in _block(proj, _CANDIDATES, _params(NS, None))
        times = _after_changes(proj)
        times["kept"] = _kept(proj)
    finally:
        proj.close()
    p50 = {k: statistics.median(v) for k, v in times.items()}
    p99 = {k: sorted(v)[int(0.99 * len(v))] for k, v in times.items()}
    notes = (
        f"{N:,} memories in the namespace, {N // 2:,} in 40 others; {CALLS} calls, each after "
        "one change of the namespace (new memory, update or forget)"
    )
    sql = "the same from the bounded queries (CANDIDATES, NOW, load_tree), same changes"
    return [
        Figure(
            "context call hot block p50",
            p50["hot"],
            "ms",
            baseline=p50["sql hot"],
            baseline_name="the same block from the bounded queries (CANDIDATES and NOW)",
            better="lower",
            notes=notes + "; goal <= 5 ms",
        ),
        Figure(
            "context call hot block p99",
            p99["hot"],
            "ms",
            baseline=p99["sql hot"],
            baseline_name="the same block from the bounded queries, p99",
            better="lower",
            notes=notes,
        ),
        Figure(
            "context call p50 (hot block, tree, assembled) after a change",
            p50["call"],
            "ms",
            baseline=p50["sql call"],
            baseline_name=sql,
            better="lower",
            notes=notes + "; no query (a query adds a recall); goal <= 5 ms",
        ),
        Figure(
            "context call p99 (hot block, tree, assembled) after a change",
            p99["call"],
            "ms",
            baseline=p99["sql call"],
            baseline_name=sql + ", p99",
            better="lower",
            notes=notes,
        ),
        Figure(
            "context call hot block p50, namespace unchanged",
            p50["kept"],
            "ms",
            baseline=p50["hot"],
            baseline_name="the block computed (every call after a change)",
            better="lower",
            notes=notes + "; the route's kept block (the first call computes it)",
        ),
    ]
