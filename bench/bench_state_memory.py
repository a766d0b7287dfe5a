"""Worker memory per 100k memories: the partition state (folded memories, hash and slot
indexes, vectors for the gate) against the size of the same events as JSON on the log."""

from __future__ import annotations

import gc
import os
import tracemalloc

from bench.bench_rebuild import records
from bench.figures import Figure
from memstream.core.embedding import HashingEmbedder
from memstream.schemas.envelope import decode
from memstream.streams.partition_state import PartitionState

N = int(os.environ.get("BENCH_STATE_N", "100000"))


def run() -> list[Figure]:
    recs = records(N)
    events = [decode(r.value) for r in recs]
    log_bytes = sum(len(r.value) for r in recs)
    gc.collect()
    tracemalloc.start()
    state = PartitionState(0, HashingEmbedder())
    for env in events:
        state.apply(env)
    current, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    mib = current / 2**20
    return [
        Figure(
            f"worker state per {N:,} memories",
            mib,
            "MiB",
            log_bytes / 2**20,
            "the same events as JSON on the log",
            better="lower",
            notes="memory states, content-hash and slot indexes, 384-d float32 vectors for the gate",
        )
    ]
