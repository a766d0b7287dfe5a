"""Fewer full garbage collections in the worker.

A worker holds a large, long-lived heap (memory states, the store's payload cache, parsed
states, the DuckDB projection's in-memory indexes), and every recall and projection batch
promotes some new objects to the oldest generation. With CPython's default thresholds a
full collection then ran every few seconds and stopped every thread for ~150-250 ms: the
slowest recalls over HTTP were exactly those that met one (`python -m bench recall_http`,
10k memories: p99 220 ms; the requests over 80 ms fell within ~10 ms of a full collection).
Young cycles are still collected as often as before (generations 0 and 1 keep their
thresholds); only the full collection waits for ten times as many younger ones.
"""

from __future__ import annotations

import gc
from typing import Final

#: collections of the middle generation between two full collections (CPython's default: 10)
FULL_EVERY: Final = 100


def fewer_full_collections(full_every: int = FULL_EVERY) -> tuple[int, int, int]:
    """Set the oldest generation's threshold, keep the others; returns the thresholds."""
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, full_every)
    return gc.get_threshold()
