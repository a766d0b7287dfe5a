"""Consolidation: exact duplicates, clusters merged, summaries of a category."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from memstream.core.hashing import normalize
from memstream.core.lifecycle._actions import (
    _take,
    apply_actions,
)
from memstream.core.lifecycle._forgetting import (
    _group,
    _is_append,
)
from memstream.core.lifecycle._model import (
    DEFAULT_CONFIG,
    Action,
    LifecycleConfig,
    MemoryView,
    StepResult,
    Vectors,
    _iso,
    _r,
    utility_key,
)
from memstream.core.lifecycle._text import (
    compatible,
    merge_clauses,
)
from memstream.core.similarity import similarity_matrix
from memstream.schemas.ids import derived_id


def _exact_duplicates(
    views: Mapping[str, MemoryView], config: LifecycleConfig
) -> list[list[Action]]:
    groups: list[list[Action]] = []
    members = [m for m in views.values() if m.live and m.eligible and _is_append(m, config)]
    for _, same in _group(members, lambda m: (m.namespace, m.category, normalize(m.text))):
        if len(same) < 2:
            continue
        keep, *rest = sorted(same, key=lambda m: (m.created_at, m.memory_id))
        groups.append(
            [
                Action(
                    "consolidation",
                    "archive",
                    m.memory_id,
                    "exact_duplicate",
                    {"kept": keep.memory_id, "kept_created_at": _iso(keep.created_at)},
                    merged_into=keep.memory_id,
                )
                for m in rest
            ]
        )
    return groups


def _clusters(
    views: Mapping[str, MemoryView], vectors: Vectors, config: LifecycleConfig
) -> list[list[Action]]:
    out: list[list[Action]] = []
    members = [
        m
        for m in views.values()
        if m.live
        and m.eligible
        and m.memory_id in vectors
        and m.category in config.merge_categories
        and not _is_append(m, config)
    ]
    for _, group in _group(members, lambda m: (m.namespace, m.category)):
        ordered = sorted(group, key=utility_key, reverse=True)  # the most useful leads
        sims = similarity_matrix([vectors[m.memory_id] for m in ordered])
        clusters: list[list[int]] = []
        for i, m in enumerate(ordered):
            for cluster in clusters:
                if sims[cluster[0], i] > config.cluster_similarity and all(
                    compatible(ordered[j], m, config) for j in cluster
                ):
                    cluster.append(i)
                    break
            else:
                clusters.append([i])
        for cluster in clusters:
            if len(cluster) < 2:
                continue
            leader, rest = ordered[cluster[0]], [ordered[j] for j in cluster[1:]]
            parts = merge_clauses([leader.text, *(m.text for m in rest)])
            # nothing new: keep the leader's own wording (and punctuation)
            text = leader.text if parts == merge_clauses([leader.text]) else "; ".join(parts) + "."
            entities = tuple(dict.fromkeys(e for m in (leader, *rest) for e in m.entities))
            # the leader now says what its members said: it cites their turns too
            sources = _sources((leader, *rest))
            sim_of = {ordered[j].memory_id: _r(float(sims[cluster[0], j])) for j in cluster[1:]}
            ev = {
                "members": [m.memory_id for m in rest],
                "similarity": sim_of,
                "category": leader.category,
            }
            actions: list[Action] = []
            if (
                text != leader.text
                or entities != leader.entities
                or sources != leader.source_turn_ids
            ):
                actions.append(
                    Action(
                        "consolidation",
                        "rewrite",
                        leader.memory_id,
                        "merge_cluster",
                        {**ev, "previous_text": leader.text},
                        text_after=text,
                        entities_after=entities,
                        sources_after=sources,
                    )
                )
            for m in rest:
                actions.append(
                    Action(
                        "consolidation",
                        "archive",
                        m.memory_id,
                        "merge_cluster",
                        {"leader": leader.memory_id, "similarity": sim_of[m.memory_id]},
                        merged_into=leader.memory_id,
                    )
                )
            out.append(actions)
    return out


def plan_consolidation(
    memories: Iterable[MemoryView],
    vectors: Vectors | None,
    at: datetime,
    config: LifecycleConfig = DEFAULT_CONFIG,
) -> StepResult:
    views = {m.memory_id: m for m in memories}
    vecs = vectors or {}
    planned: list[Action] = []
    deferred = 0
    batches = _exact_duplicates(views, config)
    while True:  # a merge can make two leaders compatible: repeat until no cluster forms
        batches += _clusters(views, vecs, config)
        if not batches:
            break
        taken, left = _take(batches, config.max_actions_per_step - len(planned), first=not planned)
        planned.extend(taken)
        deferred = left
        changed = apply_actions([views[a.memory_id] for a in taken], taken, at)
        views.update((v.memory_id, v) for v in changed)
        if left or not taken:
            break
        batches = []
    return StepResult(tuple(planned), deferred)


def _sources(memories: Iterable[MemoryView]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for m in memories for t in m.source_turn_ids))


def summary_id(namespace: str, category: str, at: datetime) -> str:
    return derived_id(at, "category-summary", namespace, category, at.isoformat())


def _summary_due(
    group: Sequence[MemoryView],
    previous: Sequence[MemoryView],
    at: datetime,
    config: LifecycleConfig,
) -> bool:
    """A category's summary is due: none yet, or members created since the newest one make
    ``summary_refresh_growth`` of those it had, or any after ``summary_refresh_after``."""
    if not previous:
        return True
    last = max(s.created_at for s in previous)
    new = sum(m.created_at > last for m in group)
    if new == 0:
        return False  # debounce: the summary already covers the newest member
    grown = new >= config.summary_refresh_growth * (len(group) - new)
    return grown or at - last >= config.summary_refresh_after


def plan_summaries(
    memories: Iterable[MemoryView], at: datetime, config: LifecycleConfig = DEFAULT_CONFIG
) -> StepResult:
    ms = list(memories)
    summaries = [m for m in ms if m.category == "summary" and m.status == "active"]
    members = [m for m in ms if m.live and m.category != "summary" and m.created_at <= at]
    batches: list[list[Action]] = []
    for (namespace, category), group in _group(members, lambda m: (m.namespace, m.category)):
        if len(group) <= config.summary_threshold:
            continue
        previous = [s for s in summaries if s.namespace == namespace and s.subject == category]
        if not _summary_due(group, previous, at, config):
            continue
        newest = max(m.created_at for m in group)
        ordered = sorted(group, key=utility_key, reverse=True)
        parts = merge_clauses([m.text for m in ordered])
        shown = parts[: config.summary_max_clauses]
        more = f" (+{len(parts) - len(shown)} more)" if len(parts) > len(shown) else ""
        text = f"{category} summary ({len(group)} memories): " + "; ".join(shown) + more + "."
        sid = summary_id(namespace, category, at)
        created = MemoryView(
            memory_id=sid,
            namespace=namespace,
            text=text,
            category="summary",
            created_at=at,
            importance=config.summary_importance,
            subject=category,
            slot="category_summary",
            entities=tuple(sorted({e for m in group for e in m.entities}))[:50],
            last_q_update=at,
            retention=1.0,
            # derived: it cites its members' turns, so recall can fold it behind them
            source_turn_ids=_sources(ordered),
        )
        ev = {
            "category": category,
            "members": [m.memory_id for m in ordered],
            "newest_member": _iso(newest),
        }
        batch = [Action("summaries", "create", sid, "category_summary", ev, created=created)]
        for s in sorted(previous, key=lambda s: s.memory_id):
            if not s.exempt:
                batch.append(
                    Action(
                        "summaries",
                        "supersede",
                        s.memory_id,
                        "summary_refreshed",
                        {"replaced_by": sid, "created_at": _iso(s.created_at)},
                        superseded_by=sid,
                        valid_until=at,
                    )
                )
        batches.append(batch)
    taken, deferred = _take(batches, config.max_actions_per_step, first=True)
    return StepResult(tuple(taken), deferred)
