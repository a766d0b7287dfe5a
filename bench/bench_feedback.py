"""Feedback throughput through the Q-learning agent against a raw aiokafka
consume-and-produce loop over the same feedback records, on one fresh broker in the same run.

Setup: the memory log is seeded with ``MemoryCreated`` events (50 namespaces, keyed by
namespace with the client's default partitioner, so each lands on the memory-log partition
that is co-partitioned with the namespace's feedback partition), then N feedback events
naming 1-3 of those memories each are published before the worker starts. The worker folds
the seeded log into its partition states, then the q-learner works through the backlog; the
rate is N over the span of ``recorded_at`` from the first to the last ``QValueUpdated``.
"""

from __future__ import annotations

import asyncio
import os
from datetime import timedelta
from typing import Any

from bench.bench_rebuild import T0, records
from bench.broker import fresh_broker
from bench.figures import Figure
from bench.live_pipeline import collect, publish_raw, raw_baseline, recorded_at, worker_process
from memstream.schemas.envelope import Envelope, encode, make_event
from memstream.schemas.events import Feedback
from memstream.schemas.ids import derived_id

N = int(os.environ.get("BENCH_FEEDBACK_N", "20000"))
N_MEM = int(os.environ.get("BENCH_FEEDBACK_MEMORIES", "2000"))
SPACING_S = 0.1  # event time between feedback events: a burst, as a throughput test wants
NAMESPACES = 50  # as in bench_rebuild.records: memory i lives in namespace ns-(i % 50)
OUTCOMES: tuple[tuple[str | None, float | None], ...] = (
    ("positive", None),
    ("negative", None),
    ("positive", None),
    ("very_negative", None),
    (None, 0.8),  # an explicit reward, no outcome
)

# Where the worker's time goes: `py-spy record -p <worker pid>` during one run (20k events,
# inclusive samples). Measured once, by hand; kept here so the figure explains itself.
PROFILE = (
    "py-spy on the worker: each feedback waits for the acks of its Q updates before the "
    "next (one agent, concurrency=1, acks=all), so the producer sends one small request per "
    "feedback (~25% of samples, mostly the socket write) and the loop idles on acks ~19%; "
    "the handler itself ~26% (building and validating the QValueUpdated events ~11%, "
    "applying and sending ~11%, Q planning ~3%), decoding the input ~9%, the rest faust's "
    "per-event cost"
)


def feedback_events(n: int, n_mem: int) -> list[Envelope[Any]]:
    """``n`` feedback events, each naming 1-3 distinct seeded memories of its namespace."""
    per_ns = n_mem // NAMESPACES
    out = []
    for j in range(n):
        ns = j % NAMESPACES
        count = 1 + j % 3
        ids = [f"m{ns + NAMESPACES * ((j * 7 + 13 * t) % per_ns)}" for t in range(count)]
        outcome, reward = OUTCOMES[j % len(OUTCOMES)]
        at = T0 + timedelta(seconds=n_mem + j * SPACING_S)
        out.append(
            make_event(
                Feedback(memory_ids=ids, outcome=outcome, reward=reward),  # type: ignore[arg-type]
                namespace=f"ns-{ns}",
                occurred_at=at,
                producer="bench",
                event_id=derived_id(at, "bench-feedback", str(j)),
            )
        )
    return out


def run() -> list[Figure]:
    if N_MEM < NAMESPACES * 3:
        raise ValueError(f"BENCH_FEEDBACK_MEMORIES must be at least {NAMESPACES * 3}")
    seed = [(r.key or b"", r.value) for r in records(N_MEM)]
    feedback = [(e.key, encode(e)) for e in feedback_events(N, N_MEM)]
    with fresh_broker() as settings:
        prefix, bootstrap = settings.topic_prefix, settings.bootstrap()
        asyncio.run(publish_raw(bootstrap, f"{prefix}.memory.log", seed))
        asyncio.run(publish_raw(bootstrap, f"{prefix}.feedback", feedback))
        raw = raw_baseline(settings, f"{prefix}.feedback", N)
        seen: set[str] = set()

        def handled(event: dict[str, Any]) -> int:
            fid = event["payload"]["feedback_event_id"]
            if fid in seen:
                return 0
            seen.add(fid)
            return 1

        with worker_process(settings):
            updates = asyncio.run(collect(settings, frozenset({"QValueUpdated"}), handled, N))
    stamps = [recorded_at(e) for e in updates]
    span = max(stamps) - min(stamps) if stamps else 0.0
    rate = len(seen) / span if span > 0 else 0.0
    note = (
        f"{N} feedback events naming 1-3 of {N_MEM} seeded memories each ({len(updates)} "
        f"Q updates; positive, negative, very_negative, explicit reward), {SPACING_S} s apart "
        "in event time (a burst: the daily dream cycle runs once per namespace), 4 partitions, "
        f"one worker, projections off; {PROFILE}"
    )
    if len(seen) < N:
        note += f"; only {len(seen)} feedback events handled before the timeout"
    return [
        Figure(
            "feedback events/s through the Q-learner vs raw loop",
            rate,
            "events/s",
            raw,
            "raw aiokafka consume-and-produce loop",
            notes=note,
        )
    ]
