"""What structured metadata costs the write path's extraction step.

Per turn, the write path runs the rule extractor and then, for every memory it creates or
updates, pulls URLs, commands, paths, versions and ids out of its source turns
(core/metadata.py, write_plan._metadata; cached per turn). Measured here: that step with
the metadata pass against the same step without it, in the same run, alternating repetitions
so background load lands on both alike; each turn's time is its best repetition. Two
workloads: the synthetic benchmark turns (bench/workload.py) and the bundled
conversations (data/sample_conversations.jsonl, real phrasing with versions and links).
Goal (issue: what the agent always knows): at most +10%.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

from bench.bench_rule_extractor import make_turns
from bench.figures import Figure
from memstream.core import metadata
from memstream.core.facts import TurnView
from memstream.core.rule_extractor import extract_rules

REPS = 7
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample_conversations.jsonl"


def sample_turns() -> list[TurnView]:
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    return [
        TurnView(
            turn_id=r["turn_id"],
            role=r["role"],
            speaker=r["speaker"],
            text=r["text"],
            occurred_at=datetime.fromisoformat(r["occurred_at"].replace("Z", "+00:00")),
        )
        for r in rows
    ]


def _plain(turn: TurnView) -> int:
    return len(extract_rules([turn]))


def _with_metadata(turn: TurnView) -> int:
    facts = extract_rules([turn])
    for _ in facts:  # as write_plan._metadata: each memory, from its source turn (cached)
        metadata.merge(metadata.extract(turn.text))
    return len(facts)


def measure(batch: list[TurnView]) -> tuple[float, float]:
    """Mean best-of-REPS microseconds per turn: (with metadata, without)."""
    clock = time.perf_counter_ns
    paths = {"with": _with_metadata, "without": _plain}
    best = {name: [1 << 62] * len(batch) for name in paths}
    for rep in range(REPS):
        for name in paths if rep % 2 == 0 else reversed(list(paths)):
            metadata._extract.cache_clear()  # every pass meets each text for the first time
            fn, times = paths[name], best[name]
            for i, turn in enumerate(batch):
                t0 = clock()
                fn(turn)
                times[i] = min(times[i], clock() - t0)
    mean = {name: sum(t) / len(t) / 1000.0 for name, t in best.items()}
    return mean["with"], mean["without"]


def run() -> list[Figure]:
    figures = []
    for label, batch in (("workload", make_turns()), ("bundled conversations", sample_turns())):
        ours, base = measure(batch)
        figures.append(
            Figure(
                f"extraction with metadata ({label})",
                ours,
                "µs/turn",
                baseline=base,
                baseline_name="the same extraction without the metadata pass",
                better="lower",
                notes=f"{len(batch)} turns, one per call, best of {REPS}; goal ratio <= 1.10",
            )
        )
    return figures
