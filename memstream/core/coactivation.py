"""Hebbian co-activation: memories recalled together grow together (access-tracker rules).

Public API
----------
``CoactivationConfig(factor=1.02, max_stability=100.0, boost_min_count=3, max_ids=20)``
``pairs(memory_ids, max_ids=20) -> list[tuple[str, str]]``
    The unordered pairs (each a sorted tuple, the list sorted) whose co-occurrence count
    one recall increments. Only the first ``max_ids`` distinct ids (the recall's rank
    order) take part: a 1000-hit recall would otherwise make half a million pairs, and
    low ranks were hardly used together anyway.
``co_reinforced(stability, config) -> float``
    ``stability * factor``, capped at ``max_stability``.
``plan_recall(memory_ids, stabilities, config, spaced=None) -> CoactivationPlan``
    The pairs to increment and one ``StabilityChange`` per known memory returned together
    with at least one other (none for a single hit, none when already at the cap, none for
    a memory outside ``spaced`` when that is given). Maps onto
    ``MemoryReinforced(reason="coactivation")``.
``spaced_uses(memory_ids, used_before, at, spacing) -> frozenset[str]``
    The memories with no earlier-logged use (``used_before``: their access times before
    this recall) within ``spacing`` of ``at``: the ones this use may strengthen (the
    spacing effect).
``boosted_pairs(pair_counts, min_count=3) -> list[tuple[str, str]]``
``boost_partners(memory_id, pair_counts, min_count=3) -> list[str]``
    Pairs seen together ``min_count``+ times, and a memory's partners in them (sorted),
    which recall may pull in alongside it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import combinations
from typing import Any

Pair = tuple[str, str]

MAX_IDS = 20
BOOST_MIN_COUNT = 3


@dataclass(frozen=True, slots=True)
class CoactivationConfig:
    factor: float = 1.02
    max_stability: float = 100.0  # same ceiling as the gate's reinforcement
    boost_min_count: int = BOOST_MIN_COUNT
    max_ids: int = MAX_IDS
    # A use strengthens a memory only when its previous use is at least this long ago:
    # massed repetition (an agent recalling the same memories turn after turn) teaches
    # little (the spacing effect; FSRS's stability gain vanishes as recall nears certain),
    # and without it 50 recalls in a minute multiplied stability by 1.02**50 = 2.7 and
    # wrote ten events per recall for the projections to apply beside the next recall
    spacing: timedelta = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class StabilityChange:
    memory_id: str
    stability_before: float
    stability_after: float
    partners: int

    def evidence(self) -> dict[str, Any]:
        return {"rule": "coactivation", "partners": self.partners}


@dataclass(frozen=True, slots=True)
class CoactivationPlan:
    pairs: tuple[Pair, ...]
    reinforcements: tuple[StabilityChange, ...]


def _distinct(memory_ids: Sequence[str], max_ids: int) -> list[str]:
    return list(dict.fromkeys(memory_ids))[: max(max_ids, 0)]


def pair_of(a: str, b: str) -> Pair:
    return (a, b) if a <= b else (b, a)


def pairs(memory_ids: Sequence[str], max_ids: int = MAX_IDS) -> list[Pair]:
    ids = sorted(_distinct(memory_ids, max_ids))
    return list(combinations(ids, 2))


def co_reinforced(stability: float, config: CoactivationConfig) -> float:
    return min(stability * config.factor, max(config.max_stability, stability))


def spaced_uses(
    memory_ids: Iterable[str],
    used_before: Mapping[str, Collection[datetime]],
    at: datetime,
    spacing: timedelta,
) -> frozenset[str]:
    """The memories this use at ``at`` may strengthen: no use logged before it lies within
    ``spacing`` of it, on either side (event times: a replay may log them out of order)."""
    return frozenset(
        mid for mid in memory_ids if all(abs(at - t) >= spacing for t in used_before.get(mid, ()))
    )


def plan_recall(
    memory_ids: Sequence[str],
    stabilities: Mapping[str, float],
    config: CoactivationConfig = CoactivationConfig(),
    spaced: Collection[str] | None = None,
) -> CoactivationPlan:
    """``spaced``: the memories the use may strengthen (``spaced_uses``); all when None."""
    ids = _distinct(memory_ids, config.max_ids)
    changes: list[StabilityChange] = []
    if len(ids) >= 2:
        for mid in sorted(ids):
            before = stabilities.get(mid)
            if before is None or (spaced is not None and mid not in spaced):
                continue
            after = co_reinforced(before, config)
            if after != before:
                changes.append(StabilityChange(mid, before, after, len(ids) - 1))
    return CoactivationPlan(tuple(pairs(ids, config.max_ids)), tuple(changes))


def boosted_pairs(pair_counts: Mapping[Pair, int], min_count: int = BOOST_MIN_COUNT) -> list[Pair]:
    totals: dict[Pair, int] = {}
    for (a, b), n in pair_counts.items():  # tolerate unsorted keys: (b, a) counts for (a, b)
        if a != b:
            key = pair_of(a, b)
            totals[key] = totals.get(key, 0) + n
    return sorted(p for p, n in totals.items() if n >= min_count)


def boost_partners(
    memory_id: str,
    pair_counts: Mapping[Pair, int],
    min_count: int = BOOST_MIN_COUNT,
) -> list[str]:
    partners = {
        b if a == memory_id else a
        for a, b in boosted_pairs(pair_counts, min_count)
        if memory_id in (a, b)
    }
    return sorted(partners)
