"""The worker's collector setting: full collections ten times rarer, young ones rarer too."""

from __future__ import annotations

import gc

from memstream.infra.gc_pauses import FULL_EVERY, YOUNG, fewer_full_collections


def test_the_full_and_young_collections_wait_longer() -> None:
    before = gc.get_threshold()
    try:
        young, middle, full = fewer_full_collections()
        assert middle == before[1]
        assert (young, full) == (YOUNG, FULL_EVERY) == (10_000, 100)
    finally:
        gc.set_threshold(*before)
