"""Graph queries at 100k edges in one namespace: ``memstream graph ID --hops 2`` as the HTTP
route runs it (projections/graph_queries.indexed_neighbourhood: the walk over the
projection's kept adjacency lists, labelled from its kept labels), on a
DuckDB projection holding 20,000 memories and 100,000 edges plus 20 other namespaces beside
it. Baselines, same run: every edge of the namespace fetched and walked in Python, and the
recursive CTE over ``relations`` (what the route ran before, and still runs for ``as_of``).
The first call of a namespace reads its edges and labels (reported apart). Goal: p50 <= 5 ms.
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench.figures import Figure
from memstream.infra.topics import topic_names
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.graph_queries import indexed_neighbourhood, neighbourhood

EDGES = int(os.environ.get("BENCH_GRAPH_EDGES", "100000"))
MEMORIES = EDGES // 5
OTHERS = 20
CALLS = 200
BASELINE_CALLS = 10
NS = "graph-bench"


def _fill(duck: DuckDBProjection) -> None:
    con = duck.con
    for ns, n_mem, n_edges in [(NS, MEMORIES, EDGES)] + [
        (f"other-{i}", MEMORIES // 10, EDGES // 10) for i in range(OTHERS)
    ]:
        con.execute(
            "INSERT INTO memories (namespace, memory_id, text, category, status) "
            "SELECT ?, 'm' || i, 'memory number ' || i, 'fact', 'active' FROM range(?) t(i)",
            [ns, n_mem],
        )
        # a sparse random graph: each edge joins two memories, relations mixed
        con.execute(
            "INSERT OR IGNORE INTO relations SELECT ?, 'm' || (hash(i) % ?), "
            "'m' || (hash(i + 7919) % ?), "
            "['same_entity', 'causes', 'elaborates', 'supersedes'][1 + (i % 4)], "
            "0.4 + (i % 50) / 100, 'bench', TIMESTAMPTZ '2024-01-01', 'e' || i FROM range(?) t(i)",
            [ns, n_mem, n_mem, n_edges],
        )


def _python_walk(duck: DuckDBProjection, memory_id: str, hops: int) -> set[str]:
    _cols, rows = duck.user_query(
        "SELECT source_id, target_id FROM relations WHERE namespace = ?", 10_000_000, [NS]
    )
    adjacent: dict[str, set[str]] = defaultdict(set)
    for a, b in rows:
        adjacent[a].add(b)
        adjacent[b].add(a)
    seen, frontier = {memory_id}, {memory_id}
    for _ in range(hops):
        frontier = {n for f in frontier for n in adjacent[f]} - seen
        seen |= frontier
    return seen


def _ms(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.99) - 1]


def run() -> list[Figure]:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="memstream-graph-") as tmp:
        duck = DuckDBProjection(Path(tmp) / "a.duckdb", topic_names("bench"))
        try:
            _fill(duck)
            edges = duck.con.execute(
                "SELECT count(*) FROM relations WHERE namespace = ?", [NS]
            ).fetchone()
            query = duck.rows
            t = time.perf_counter()
            indexed_neighbourhood(duck.graph, NS, "m0", 1)  # reads its edges and labels
            first_ms = (time.perf_counter() - t) * 1000
            timings: dict[int, list[float]] = {1: [], 2: []}
            cte: list[float] = []
            sizes: list[int] = []
            for hops in (1, 2):
                for call in range(CALLS):
                    start = f"m{rng.randrange(MEMORIES)}"
                    t = time.perf_counter()
                    graph = indexed_neighbourhood(duck.graph, NS, start, hops)
                    timings[hops].append((time.perf_counter() - t) * 1000)
                    if hops == 2:
                        sizes.append(len(graph["nodes"]))
                        if call % 4 == 0:  # the recursive CTE, interleaved, and the same answer
                            t = time.perf_counter()
                            by_sql = neighbourhood(query, NS, start, 2)
                            cte.append((time.perf_counter() - t) * 1000)
                            assert by_sql == graph, start
            baseline = []
            for _ in range(BASELINE_CALLS):
                start = f"m{rng.randrange(MEMORIES)}"
                t = time.perf_counter()
                nodes = _python_walk(duck, start, 2)
                baseline.append((time.perf_counter() - t) * 1000)
                assert {
                    n["memory_id"] for n in indexed_neighbourhood(duck.graph, NS, start, 2)["nodes"]
                } == nodes
        finally:
            duck.close()
    p50_1, p99_1 = _ms(timings[1])
    p50_2, p99_2 = _ms(timings[2])
    base = statistics.median(baseline)
    notes = (
        f"{edges[0] if edges else 0} edges among {MEMORIES} memories in the namespace, "
        f"{OTHERS} other namespaces beside it; 2 hops reach {statistics.median(sizes):.0f} "
        f"memories (median); {CALLS} calls each; goal p50 <= 5 ms"
    )
    baseline_name = "every edge of the namespace fetched and walked in Python"
    notes += f"; the namespace's first call (reads its edges and labels) {first_ms:.0f} ms"
    cte_p50 = statistics.median(cte)
    return [
        Figure(
            "graph query p50 @100k edges (2 hops) vs the recursive CTE",
            p50_2, "ms", cte_p50, "the recursive CTE over relations, same starts", "lower", notes,
        ),
        Figure("graph query p50 @100k edges (2 hops)", p50_2, "ms", base, baseline_name, "lower", notes),
        Figure("graph query p99 @100k edges (2 hops)", p99_2, "ms", base, baseline_name, "lower", notes),
        Figure("graph query p50 @100k edges (1 hop)", p50_1, "ms", base, baseline_name, "lower", notes),
        Figure("graph query p99 @100k edges (1 hop)", p99_1, "ms", base, baseline_name, "lower", notes),
    ]  # fmt: skip


if __name__ == "__main__":
    for f in run():
        print(
            f"{f.name}: {f.value:.2f} {f.unit} (baseline {f.baseline:.1f}, x{f.ratio:.3f})  {f.notes}"
        )
