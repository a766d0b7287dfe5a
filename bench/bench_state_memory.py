"""Worker memory per 100k memories: the partition state (folded memories, hash and slot
indexes, vectors for the gate, what it remembers of extracted turns and applied inputs)
against the size of the same events as JSON on the log.

The log is shaped like the write path's: each memory caused by its own turn, one
TurnsExtracted per flush of four turns (two memories), sessions of 40 turns across 50
namespaces. The 1M figure is extrapolated linearly from N/2 and N memories: an upper bound,
since the dedup windows (core/seen_turns.py, core/recent_ids.py) stop growing at their caps.
"""

from __future__ import annotations

import gc
import os
import tracemalloc
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.bench_rebuild import memory_text
from bench.figures import Figure
from memstream.core.embedding import HashingEmbedder
from memstream.core.hashing import content_hash
from memstream.schemas.envelope import Envelope, decode, encode, make_event
from memstream.schemas.events import MemoryCreated, TurnsExtracted, TurnSignal
from memstream.streams.partition_state import PartitionState

N = int(os.environ.get("BENCH_STATE_N", "100000"))
T0 = datetime(2024, 1, 1, tzinfo=UTC)
NAMESPACES = 50
TURNS_PER_FLUSH = 4
MEMORIES_PER_FLUSH = 2
SESSION_TURNS = 40


def log_of(n: int) -> list[bytes]:
    """``n`` memories and the extraction records of the turns they came from, in log order."""
    out: list[bytes] = []
    flushes = (n + MEMORIES_PER_FLUSH - 1) // MEMORIES_PER_FLUSH
    for f in range(flushes):
        ns = f"ns-{f % NAMESPACES}"
        k = f // NAMESPACES  # this namespace's flush number
        first = k * TURNS_PER_FLUSH
        session = f"{ns}-s{first // SESSION_TURNS}"
        at = T0 + timedelta(minutes=f)
        turns = [(f"{ns}-turn-{first + j}", f"ev-{f}-{j:02d}") for j in range(TURNS_PER_FLUSH)]
        events: list[Envelope[Any]] = []
        for m in range(MEMORIES_PER_FLUSH):
            i = f * MEMORIES_PER_FLUSH + m
            if i >= n:
                break
            text = memory_text(i)
            events.append(
                make_event(
                    MemoryCreated(
                        memory_id=f"m{i}",
                        text=text,
                        category="preference",
                        content_hash=content_hash(ns, text),
                        source_turn_ids=[turns[m][0]],
                    ),
                    namespace=ns,
                    session_id=session,
                    occurred_at=at,
                    causation_id=turns[m][1],
                    event_id=f"e{i}",
                )
            )
        events.append(  # last, as the write path sends it
            make_event(
                TurnsExtracted(
                    trigger="buffer_full",
                    turns=[TurnSignal(turn_id=t, event_id=e, level="NORMAL") for t, e in turns],
                    facts=len(events),
                ),
                namespace=ns,
                session_id=session,
                occurred_at=at,
                causation_id=turns[-1][1],
                event_id=f"x{f}",
            )
        )
        out.extend(encode(env) for env in events)
    return out


def state_mib(n: int) -> tuple[float, float]:
    """(MiB held by the state folded from ``n`` memories' log, MiB of that log as JSON)."""
    raw = log_of(n)
    events = [decode(r) for r in raw]
    log_bytes = sum(len(r) for r in raw)
    del raw
    gc.collect()
    tracemalloc.start()
    state = PartitionState(0, HashingEmbedder())
    for env in events:
        state.apply(env)
    del events
    gc.collect()
    current, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del state
    return current / 2**20, log_bytes / 2**20


def run() -> list[Figure]:
    half, half_log = state_mib(N // 2)
    mib, log_mib = state_mib(N)
    per_memory = (mib - half) / (N - N // 2)
    at_million = mib + per_memory * (1_000_000 - N)
    log_million = log_mib + (log_mib - half_log) / (N - N // 2) * (1_000_000 - N)
    notes = (
        "memory states, content-hash and slot indexes, the gate's 384-d float32 vectors by "
        "their non-zero entries (core/sparse_rows.py; the dense matrices of the namespaces "
        "the gate is using, at most 64 MiB beyond the one in use, are not counted), dedup "
        "windows of extracted turns and applied inputs"
    )
    return [
        Figure(
            f"worker state per {N:,} memories",
            mib,
            "MiB",
            log_mib,
            "the same events as JSON on the log",
            better="lower",
            notes=notes,
        ),
        Figure(
            "worker state per 1,000,000 memories",
            at_million,
            "MiB",
            log_million,
            "the same events as JSON on the log",
            better="lower",
            notes=f"extrapolated linearly from {N // 2:,} and {N:,} memories (an upper bound: "
            "the dedup windows are capped); goal 1,024 MiB. " + notes,
        ),
    ]
