"""The context call's hot block at 10k memories in one namespace.

What ``POST /v1/context`` does without a query (consumers/http_context.py): the bounded
candidate query per section on the DuckDB projection, then the pure block
(core/hot_memory.build_hot) and its Markdown. The namespace holds 10,000 active memories of
every section's kind (identity and profile slots, preferences, commitments, some done,
lessons, links and commands, plain facts), over a year of event time, plus 40 other
namespaces beside it. Baseline, same run: the same block from every row of the namespace
(what the call would cost without the per-section bounds). Goal: p50 <= 5 ms.

The route keeps a namespace's block until the projection applies anything of it
(consumers/http_context.py): ``context call hot block p50, namespace unchanged`` is that
path (``ContextRoutes.hot`` itself) on repeated calls; the figures above are what every call
after a change costs, which is what an agent whose turns are extracted between its context
calls mostly pays.
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
from memstream.core.hashing import content_hash
from memstream.core.hot_memory import build_hot, render
from memstream.infra.settings import Settings
from memstream.infra.topics import topic_names
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.hot_queries import CANDIDATES as _CANDIDATES
from memstream.projections.hot_queries import NOW as _NOW
from memstream.projections.hot_queries import params as _params
from memstream.projections.port import LogRecord
from memstream.schemas import MemoryCreated, encode, make_event

N = int(os.environ.get("BENCH_CONTEXT_N", "10000"))
CALLS = 100
BASELINE_CALLS = 6  # seconds each: every row of the namespace through the block
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


def run() -> list[Figure]:
    proj = DuckDBProjection(":memory:", {**topic_names("bench"), "memory_log": TOPIC})
    try:
        recs = _records(N)
        for i in range(0, len(recs), 5000):
            proj.apply(recs[i : i + 5000])
        bounded = (_CANDIDATES, _params(NS, None))
        everything = (
            "SELECT m.*, 0 AS access_count FROM memories m WHERE namespace = ? "
            "AND status = 'active'",
            [NS],
        )
        assert "Dana" in _block(proj, *bounded)
        times: dict[str, list[float]] = {"bounded": [], "all": []}
        for call in range(CALLS):  # the baseline interleaved, a few times
            runs = [("bounded", bounded)]
            if call % (CALLS // BASELINE_CALLS) == 0:
                runs.append(("all", everything))
            for name, (sql, params) in runs:
                started = time.perf_counter()
                _block(proj, sql, params)
                times[name].append((time.perf_counter() - started) * 1000)
        times["kept"] = _kept(proj)
    finally:
        proj.close()
    p50 = {k: statistics.median(v) for k, v in times.items()}
    p99 = {k: sorted(v)[int(0.99 * len(v))] for k, v in times.items()}
    notes = (
        f"{N:,} memories in the namespace, {N // 2:,} in 40 others; {CALLS} calls "
        f"(baseline {len(times['all'])})"
    )
    return [
        Figure(
            "context call hot block p50",
            p50["bounded"],
            "ms",
            baseline=p50["all"],
            baseline_name="the same block from every row of the namespace",
            better="lower",
            notes=notes + "; goal <= 5 ms",
        ),
        Figure(
            "context call hot block p99",
            p99["bounded"],
            "ms",
            baseline=p99["all"],
            baseline_name="the same block from every row of the namespace, p99",
            better="lower",
            notes=notes,
        ),
        Figure(
            "context call hot block p50, namespace unchanged",
            p50["kept"],
            "ms",
            baseline=p50["bounded"],
            baseline_name="the block computed (every call after a change)",
            better="lower",
            notes=notes + "; the route's kept block (the first call computes it)",
        ),
    ]
