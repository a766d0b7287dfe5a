"""Evolution candidates: memories that should change, with the evidence. Nothing is decided.

A reviewer (human or agent) acts on a candidate; these rules only find them. The
per-memory levels mirror the DuckDB ``evolution_candidates`` view.

Public API
----------
``EvolutionConfig(critical_q=0.2, critical_usage=10, high_q=0.3, high_usage=5,
stale_after=90 d, merge_similarity=0.95, cover_similarity=0.6, induce_similarity=0.85,
induce_min=3, procedural=("principle", "skill"), append_categories=("moment", "decision"))``
``EvolutionView``: one memory (text, kind, subject, slot, entities) with its usage (access
count and times, last access, the Q updates learned from use with their feedback outcomes).
``memory_candidates(memories, at, config)``: at most one per memory, first that holds:
    ``critical`` (Q < 0.2 and access_count >= 10) -> ``deprecate``;
    ``high`` (Q < 0.3 and access_count >= 5) -> ``refine``;
    ``stale`` (no access, or since creation if never accessed, for 90+ days) -> ``archive``.
``merge_candidates(memories, vectors, config)``: pairs in the same namespace and category
    (not an append category, moment or decision, nor an episode: what happened twice
    happened twice) -> ``merge``, evidence ``match``: ``near_identical`` (cosine > 0.95),
    or ``covered`` (cosine >= 0.6, one text says everything the other says and more
    without a negation, ``core.merge.says_more``, and the two may be one memory,
    ``core.lifecycle.compatible``: same subject for facts, same slot when both have one,
    nested entities and names). A covered memory joins only its most similar coverer, so
    one short text inside several longer ones never chains them into one merge. These
    are what the write path's gate keeps apart: it reinforces above 0.92 and updates
    from 0.75, so near-identical pairs are rare, while a short fact and a longer
    restatement ("Sam is using Flask", later "Sam is using Python and Flask for Sam's
    backend") score 0.6-0.75 on its lexical embedder and are kept as two.
``induction_candidates(memories, vectors, config)``: groups of 3+ procedural memories of
    one namespace linked by cosine >= 0.85 (single link) -> ``induce`` a general rule.
``find_candidates(memories, vectors, at, config)``: all three, in that order.
Only active memories are considered; pinned, immutable and flashbulb ones are exempt.
Memories without a vector take no part in the similarity rules. Every candidate's
evidence has ``usage``: per member, its access count and times, last access, Q history
and feedback outcomes over event time. ``stale_after=None`` turns the stale rule off (the
worker's own evolution runs leave forgetting by time to the dream cycle).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from memstream.core.lifecycle import compatible
from memstream.core.merge import says_more
from memstream.core.similarity import similarity_matrix

Level = Literal["critical", "high", "stale", "similar", "cluster"]
Suggestion = Literal["deprecate", "refine", "archive", "merge", "induce"]


@dataclass(frozen=True, slots=True)
class EvolutionConfig:
    critical_q: float = 0.2
    critical_usage: int = 10
    high_q: float = 0.3
    high_usage: int = 5
    stale_after: timedelta | None = timedelta(days=90)  # None: no stale rule
    merge_similarity: float = 0.95
    cover_similarity: float = 0.6  # a covering pair's floor (see merge_candidates)
    induce_similarity: float = 0.85
    induce_min: int = 3
    procedural: tuple[str, ...] = ("principle", "skill")
    append_categories: tuple[str, ...] = ("moment", "decision")  # never merged


@dataclass(frozen=True, slots=True)
class EvolutionView:
    memory_id: str
    namespace: str
    category: str
    q_value: float
    created_at: datetime
    access_count: int = 0
    last_access: datetime | None = None
    # (time, Q after, reward, outcome) of each Q update learned from use, as the shell has it
    q_history: tuple[tuple[datetime, float, float, str], ...] = ()
    accesses: tuple[datetime, ...] = ()  # the recalls that returned it (the newest kept)
    active: bool = True
    pinned: bool = False
    immutable: bool = False
    flashbulb: bool = False
    text: str = ""
    kind: str = "note"
    subject: str | None = None
    slot: str | None = None
    entities: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Candidate:
    level: Level
    action: Suggestion
    memory_ids: tuple[str, ...]
    evidence: dict[str, Any] = field(default_factory=dict)


def usage_of(m: EvolutionView) -> dict[str, Any]:
    return {
        "access_count": m.access_count,
        "last_access": None if m.last_access is None else m.last_access.isoformat(),
        "q_value": m.q_value,
        "accesses": [t.isoformat() for t in sorted(m.accesses)],
        "q_history": [[t.isoformat(), q] for t, q, _r, _o in sorted(m.q_history)],
        "feedback": [
            {"at": t.isoformat(), "outcome": o, "reward": r} for t, _q, r, o in sorted(m.q_history)
        ],
    }


def _eligible(memories: Iterable[EvolutionView]) -> list[EvolutionView]:
    return sorted(
        (m for m in memories if m.active and not (m.pinned or m.immutable or m.flashbulb)),
        key=lambda m: m.memory_id,
    )


def memory_candidates(
    memories: Iterable[EvolutionView], at: datetime, config: EvolutionConfig = EvolutionConfig()
) -> list[Candidate]:
    out: list[Candidate] = []
    for m in _eligible(memories):
        usage = {m.memory_id: usage_of(m)}
        if m.q_value < config.critical_q and m.access_count >= config.critical_usage:
            rule = {"q_below": config.critical_q, "usage_min": config.critical_usage}
            out.append(Candidate("critical", "deprecate", (m.memory_id,), {**rule, "usage": usage}))
            continue
        if m.q_value < config.high_q and m.access_count >= config.high_usage:
            rule = {"q_below": config.high_q, "usage_min": config.high_usage}
            out.append(Candidate("high", "refine", (m.memory_id,), {**rule, "usage": usage}))
            continue
        since = m.last_access or m.created_at
        if config.stale_after is not None and at - since >= config.stale_after:
            idle = round((at - since).total_seconds() / 86_400, 3)
            ev = {"idle_days": idle, "stale_after_days": config.stale_after.days, "usage": usage}
            out.append(Candidate("stale", "archive", (m.memory_id,), ev))
    return out


def _groups(
    memories: Iterable[EvolutionView], vectors: Mapping[str, NDArray[Any]], key: Any
) -> dict[Any, list[EvolutionView]]:
    groups: dict[Any, list[EvolutionView]] = {}
    for m in _eligible(memories):
        if m.memory_id in vectors:
            groups.setdefault(key(m), []).append(m)
    return groups


def _merge_pair(
    a: EvolutionView, b: EvolutionView, similarity: float, category: str, match: dict[str, str]
) -> Candidate:
    ev = {
        "similarity": round(similarity, 6),
        "category": category,
        **match,
        "usage": {a.memory_id: usage_of(a), b.memory_id: usage_of(b)},
    }
    return Candidate("similar", "merge", (a.memory_id, b.memory_id), ev)


def merge_candidates(
    memories: Iterable[EvolutionView],
    vectors: Mapping[str, NDArray[Any]],
    config: EvolutionConfig = EvolutionConfig(),
) -> list[Candidate]:
    out: list[Candidate] = []
    groups = _groups(memories, vectors, lambda m: (m.namespace, m.category))
    for (_, category), group in sorted(groups.items()):
        if category in config.append_categories:
            continue
        members = [m for m in group if m.kind != "episode"]
        if len(members) < 2:
            continue
        sims = similarity_matrix([vectors[m.memory_id] for m in members])
        coverer: dict[int, tuple[float, int]] = {}  # covered -> (similarity, its coverer)
        for i in range(len(members)):
            for j in range(i + 1, len(members)):
                sim = float(sims[i, j])
                if sim > config.merge_similarity:
                    out.append(
                        _merge_pair(
                            members[i], members[j], sim, category, {"match": "near_identical"}
                        )
                    )
                elif sim >= config.cover_similarity and compatible(members[i], members[j]):
                    for inner, outer in ((i, j), (j, i)):
                        closer = inner not in coverer or sim > coverer[inner][0]
                        if closer and says_more(members[outer].text, members[inner].text):
                            coverer[inner] = (sim, outer)
        for inner, (sim, outer) in sorted(coverer.items()):
            a, b = sorted((members[inner], members[outer]), key=lambda m: m.memory_id)
            match = {
                "match": "covered",
                "covered": members[inner].memory_id,
                "covered_by": members[outer].memory_id,
            }
            out.append(_merge_pair(a, b, sim, category, match))
    return out


def components(sims: NDArray[np.float64], threshold: float) -> list[list[int]]:
    """Single-link groups of indices whose similarity is >= threshold, each sorted."""
    n = sims.shape[0]
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            if sims[i, j] >= threshold:
                ri, rj = find(i), find(j)
                if ri != rj:
                    parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values())


def induction_candidates(
    memories: Iterable[EvolutionView],
    vectors: Mapping[str, NDArray[Any]],
    config: EvolutionConfig = EvolutionConfig(),
) -> list[Candidate]:
    out: list[Candidate] = []
    procedural = [m for m in memories if m.category in config.procedural]
    for _, members in sorted(_groups(procedural, vectors, lambda m: m.namespace).items()):
        sims = similarity_matrix([vectors[m.memory_id] for m in members])
        for group in components(sims, config.induce_similarity):
            if len(group) < config.induce_min:
                continue
            chosen = [members[i] for i in group]
            pair_sims = [float(sims[i, j]) for i in group for j in group if i < j]
            ev = {
                "size": len(chosen),
                "categories": sorted({m.category for m in chosen}),
                "min_similarity": round(min(pair_sims), 6),
                "mean_similarity": round(sum(pair_sims) / len(pair_sims), 6),
                "usage": {m.memory_id: usage_of(m) for m in chosen},
            }
            out.append(Candidate("cluster", "induce", tuple(m.memory_id for m in chosen), ev))
    return out


def find_candidates(
    memories: Iterable[EvolutionView],
    vectors: Mapping[str, NDArray[Any]] | None,
    at: datetime,
    config: EvolutionConfig = EvolutionConfig(),
) -> list[Candidate]:
    ms = list(memories)
    vecs = vectors or {}
    return (
        memory_candidates(ms, at, config)
        + merge_candidates(ms, vecs, config)
        + induction_candidates(ms, vecs, config)
    )
