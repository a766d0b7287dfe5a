"""Rule extractor speed: ``extract_rules`` one turn per call, as a stream agent calls it.

The workload is the benchmark turn stream (bench/workload.py). The baseline, measured in the
same run, is the same extractor with ``date_gates=False``: every date pattern tried on every
claim, as date resolution worked before its gates (same facts; checked here turn by turn).
Repetitions alternate between the two, all turns at a time, so background load (other work
shares the cores) lands on both alike. Each turn's time is the minimum of its repetitions
(its least-disturbed measurement); the figures are the median and p99 across turns, and the
throughput of a whole pass of single-turn calls (the quickest pass).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import cast

from bench.figures import Figure
from bench.workload import turns
from memstream.core.facts import Fact, TurnView
from memstream.core.rule_extractor import extract_rules
from memstream.schemas.events import ConversationTurn

N = 2000
REPS = 7


def make_turns(n: int = N) -> list[TurnView]:
    out = []
    for event in turns(n):
        p = cast(ConversationTurn, event.payload)
        out.append(
            TurnView(
                turn_id=p.turn_id,
                role=p.role,
                speaker=p.speaker,
                text=p.text,
                occurred_at=event.occurred_at,
            )
        )
    return out


def _gated(turn: TurnView) -> list[Fact]:
    return extract_rules([turn])


def _ungated(turn: TurnView) -> list[Fact]:
    return extract_rules([turn], date_gates=False)


def _percentile(sorted_ns: list[int], q: float) -> float:
    return sorted_ns[min(len(sorted_ns) - 1, int(q * len(sorted_ns)))] / 1000.0


def measure(batch: list[TurnView], reps: int = REPS) -> dict[str, tuple[list[int], int]]:
    """Per-turn best-of-``reps`` nanoseconds (sorted) and the quickest whole pass, per path."""
    paths: dict[str, Callable[[TurnView], list[Fact]]] = {"gated": _gated, "ungated": _ungated}
    for turn in batch:  # warm-up, and the two paths must agree
        if _gated(turn) != _ungated(turn):
            raise AssertionError(f"date gates changed the facts of {turn.turn_id}")
    clock = time.perf_counter_ns
    best = {name: [1 << 62] * len(batch) for name in paths}
    passes = dict.fromkeys(paths, 1 << 62)
    for rep in range(reps):
        order = list(paths) if rep % 2 == 0 else list(reversed(paths))
        for name in order:
            fn, times = paths[name], best[name]
            started = clock()
            for i, turn in enumerate(batch):
                t0 = clock()
                fn(turn)
                elapsed = clock() - t0
                if elapsed < times[i]:
                    times[i] = elapsed
            passes[name] = min(passes[name], clock() - started)
    return {name: (sorted(best[name]), passes[name]) for name in paths}


def run() -> list[Figure]:
    batch = make_turns()
    result = measure(batch)
    (ours, ours_pass), (base, base_pass) = result["gated"], result["ungated"]
    notes = f"{len(batch)} workload turns, one per call, best of {REPS} per turn"
    baseline_name = "every date pattern on every claim"
    return [
        Figure(
            "rule extractor median",
            _percentile(ours, 0.5),
            "µs/turn",
            baseline=_percentile(base, 0.5),
            baseline_name=baseline_name,
            better="lower",
            notes=notes,
        ),
        Figure(
            "rule extractor p99",
            _percentile(ours, 0.99),
            "µs/turn",
            baseline=_percentile(base, 0.99),
            baseline_name=baseline_name + " p99",
            better="lower",
            notes=notes,
        ),
        Figure(
            "rule extractor throughput",
            len(batch) / ours_pass * 1e9,
            "turns/s",
            baseline=len(batch) / base_pass * 1e9,
            baseline_name=baseline_name,
            better="higher",
            notes=f"{len(batch)} single-turn calls, quickest of {REPS} passes",
        ),
    ]
