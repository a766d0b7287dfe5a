"""The worker's collector setting: full collections ten times rarer, young ones as before."""

from __future__ import annotations

import gc

from memstream.infra.gc_pauses import FULL_EVERY, fewer_full_collections


def test_only_the_full_collection_waits_longer() -> None:
    before = gc.get_threshold()
    try:
        young, middle, full = fewer_full_collections()
        assert (young, middle) == before[:2]
        assert full == FULL_EVERY == 100
    finally:
        gc.set_threshold(*before)
