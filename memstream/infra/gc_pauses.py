"""Fewer full garbage collections in the worker.

A worker holds a large, long-lived heap (memory states, the store's payload cache, parsed
states, the DuckDB projection's in-memory indexes), and every recall and projection batch
promotes some new objects to the oldest generation. With CPython's default thresholds a
full collection then ran every few seconds and stopped every thread for ~150-250 ms: the
slowest recalls over HTTP were exactly those that met one (`python -m bench recall_http`,
10k memories: p99 220 ms; the requests over 80 ms fell within ~10 ms of a full collection).
Only the full collection waits for ten times as many younger ones.

Young collections were the other cost: at CPython's threshold (700 net allocations) the
worker ran ~250 of them a second while it answered recalls (each recall, its access event
and the projections' batches allocate thousands of short-lived objects), ~17% of the
time, and a recall met several. At ``YOUNG`` most of those objects are freed by their
reference counts before a collection comes, which then finds little to do: the recall's
own time over HTTP went from p50 ~12 to ~10 ms (`python -m bench recall_http`).
"""

from __future__ import annotations

import gc
from typing import Final

#: collections of the middle generation between two full collections (CPython's default: 10)
FULL_EVERY: Final = 100
#: net allocations between two young collections (CPython's default: 700)
YOUNG: Final = 10_000


def fewer_full_collections(
    full_every: int = FULL_EVERY, young: int = YOUNG
) -> tuple[int, int, int]:
    """Set the youngest and oldest generations' thresholds, keep the middle one's; returns
    the thresholds."""
    _, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, full_every)
    return gc.get_threshold()
