"""Forgetting: contradictions, redundancy, the utility floor, capacity, and archival."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np

from memstream.core.lifecycle._actions import (
    _cap,
)
from memstream.core.lifecycle._model import (
    DEFAULT_CONFIG,
    Action,
    LifecycleConfig,
    MemoryView,
    StepResult,
    Vectors,
    _r,
    trivia,
    utility_key,
)
from memstream.core.lifecycle._retention import (
    _since_use,
)
from memstream.core.lifecycle._text import (
    _nested,
    _words,
    distinct_items,
)
from memstream.core.qlearning import days_between as _days
from memstream.core.similarity import similarity_matrix


def _dormant(m: MemoryView, rule: str, evidence: dict[str, Any]) -> Action:
    return Action("forgetting", "dormant", m.memory_id, rule, {"from_tier": m.tier, **evidence})


def _older(a: MemoryView, b: MemoryView) -> tuple[MemoryView, MemoryView]:
    """(older, newer) by creation time, then id."""
    return (a, b) if (a.created_at, a.memory_id) <= (b.created_at, b.memory_id) else (b, a)


def _contradictions(views: Mapping[str, MemoryView]) -> list[Action]:
    live = sorted((m for m in views.values() if m.live), key=lambda m: m.memory_id)
    pairs: dict[tuple[str, str], str] = {}
    slots: dict[tuple[str, str, str], list[MemoryView]] = {}
    for m in live:
        if m.subject is not None and m.slot is not None and m.category != "summary":
            slots.setdefault((m.namespace, m.subject.casefold(), m.slot.casefold()), []).append(m)
        for other in m.contradicts:
            o = views.get(other)
            if (
                o is not None
                and o.live
                and o.namespace == m.namespace
                and o.memory_id != m.memory_id
            ):
                old, new = _older(m, o)
                pairs.setdefault((old.memory_id, new.memory_id), "linked")
    for group in slots.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if not _nested(_words(a.text), _words(b.text)):  # nested: a refinement
                    old, new = _older(a, b)
                    pairs.setdefault((old.memory_id, new.memory_id), "same_slot")
    actions: list[Action] = []
    done: set[str] = set()
    for (old_id, new_id), how in sorted(pairs.items()):
        old = views[old_id]
        if old.exempt or old_id in done:
            continue
        done.add(old_id)
        actions.append(
            _dormant(
                old,
                "contradiction",
                {"newer": new_id, "how": how, "subject": old.subject, "slot": old.slot},
            )
        )
    return actions


def _utility_floor(
    views: Mapping[str, MemoryView], at: datetime, config: LifecycleConfig
) -> list[Action]:
    actions: list[Action] = []
    for m in sorted(views.values(), key=lambda m: m.memory_id):
        if not (m.live and m.eligible) or m.q_value >= config.utility_floor:
            continue
        unused = at - _since_use(m)
        if unused >= config.floor_unused:
            ev = {"q_value": _r(m.q_value), "unused_days": _r(unused.total_seconds() / 86_400)}
            actions.append(_dormant(m, "utility_floor", ev))
    return actions


def _is_append(m: MemoryView, config: LifecycleConfig) -> bool:
    return m.category in config.append_categories or m.kind == "episode"


def _similar_pairs(
    members: Sequence[MemoryView], vectors: Vectors, threshold: float
) -> list[tuple[float, int, int]]:
    sims = similarity_matrix([vectors[m.memory_id] for m in members])
    idx = np.argwhere(np.triu(sims > threshold, k=1))
    return [(float(sims[i, j]), int(i), int(j)) for i, j in idx]


def _group(ms: Iterable[MemoryView], key: Any) -> list[tuple[Any, list[MemoryView]]]:
    groups: dict[Any, list[MemoryView]] = {}
    for m in sorted(ms, key=lambda m: m.memory_id):
        groups.setdefault(key(m), []).append(m)
    return sorted(groups.items(), key=lambda kv: kv[0])


def _redundancy(
    views: Mapping[str, MemoryView], vectors: Vectors, config: LifecycleConfig
) -> list[Action]:
    actions: list[Action] = []
    candidates = [
        m
        for m in views.values()
        if m.live
        and m.memory_id in vectors
        and not _is_append(m, config)
        and m.category != "summary"
    ]
    gone: set[str] = set()
    for _, members in _group(candidates, lambda m: (m.namespace, m.category)):
        found = _similar_pairs(members, vectors, config.redundancy_similarity)
        for sim, i, j in sorted(
            found, key=lambda p: (-p[0], members[p[1]].memory_id, members[p[2]].memory_id)
        ):
            a, b = members[i], members[j]
            if a.memory_id in gone or b.memory_id in gone:
                continue
            if distinct_items(a, b):  # similar wording, different things: not redundant
                continue
            low, high = (a, b) if utility_key(a) < utility_key(b) else (b, a)
            if low.exempt:
                continue
            gone.add(low.memory_id)
            ev = {
                "kept": high.memory_id,
                "similarity": _r(sim),
                "q_value": _r(low.q_value),
                "kept_q": _r(high.q_value),
            }
            actions.append(_dormant(low, "redundancy", ev))
    return actions


def _capacity(views: Mapping[str, MemoryView], config: LifecycleConfig) -> list[Action]:
    actions: list[Action] = []
    counted = [m for m in views.values() if m.live and m.category != "summary"]
    for namespace, members in _group(counted, lambda m: m.namespace):
        cap = config.capacity_of(namespace)
        if cap is None or len(members) <= cap:
            continue
        excess = len(members) - cap
        trimmable = sorted((m for m in members if not m.exempt), key=utility_key)
        for rank, m in enumerate(trimmable[:excess], start=1):
            ev = {
                "capacity": cap,
                "live": len(members),
                "utility_rank": rank,
                "q_value": _r(m.q_value),
            }
            actions.append(_dormant(m, "capacity", ev))
    return actions


def plan_forgetting(
    memories: Iterable[MemoryView],
    vectors: Vectors | None,
    at: datetime,
    config: LifecycleConfig = DEFAULT_CONFIG,
) -> StepResult:
    views = {m.memory_id: m for m in memories}
    vecs = vectors or {}
    planned: list[Action] = []
    for rule in ("contradiction", "utility_floor", "redundancy", "capacity"):
        if rule == "contradiction":
            found = _contradictions(views)
        elif rule == "utility_floor":
            found = _utility_floor(views, at, config)
        elif rule == "redundancy":
            found = _redundancy(views, vecs, config)
        else:
            found = _capacity(views, config)
        planned.extend(found)
        for a in found:  # later rules see memories this one sent dormant
            views[a.memory_id] = replace(views[a.memory_id], tier="peripheral")
    return _cap(planned, config.max_actions_per_step)


def plan_archival(
    memories: Iterable[MemoryView], at: datetime, config: LifecycleConfig = DEFAULT_CONFIG
) -> StepResult:
    planned: list[Action] = []
    for m in sorted(memories, key=lambda m: m.memory_id):
        if (
            m.eligible
            and at - m.created_at > config.archive_after
            and trivia(m.importance, m.kind, m.subject, config)
            and m.access_count <= config.archive_max_access
            and m.stability <= config.archive_max_stability
            and m.category not in config.archive_keep_categories
        ):
            ev = {
                "age_days": _r(_days(m.created_at, at)),
                "importance": _r(m.importance),
                "access_count": m.access_count,
                "category": m.category,
            }
            planned.append(Action("archival", "archive", m.memory_id, "fact_archival", ev))
    return _cap(planned, config.max_actions_per_step)
