"""Evolution candidates in the worker: evidence by default, events only when applied.

deprecate -> MemoryArchived (the memory leaves retrieval); refine -> a fresh copy starting
at Q 0.5 that supersedes the old one; archive -> MemoryArchived; merge -> the lower-utility
side archived ``merged_into`` the other; induce -> evidence only (a new principle needs a
model or a person to write it). All events name one ``ConsolidationReported`` as cause.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memstream.core.evolution import Candidate, EvolutionView, find_candidates
from memstream.core.hashing import content_hash
from memstream.infra.settings import Settings
from memstream.schemas._fields import utc_now
from memstream.schemas.envelope import make_event
from memstream.schemas.events import (
    ConsolidationReported,
    MemoryArchived,
    MemoryCreated,
    MemorySuperseded,
)
from memstream.schemas.ids import derived_id
from memstream.streams.emit import caused_by, emit
from memstream.streams.partition_state import PartitionState
from memstream.streams.sinks import Sink


def _payloads(
    c: Candidate, state: PartitionState, ns: str, at: datetime, cause: str
) -> list[tuple[Any, str]]:
    memory = state.memory(ns)
    ev = {"rule": f"evolution_{c.action}", "level": c.level, **c.evidence}
    if c.action in ("deprecate", "archive"):
        return [
            (MemoryArchived(memory_id=m, rule=f"evolution_{c.action}", evidence=ev), m)
            for m in c.memory_ids
        ]
    if c.action == "refine":
        out: list[tuple[Any, str]] = []
        for m in c.memory_ids:
            old = memory.states[m]
            new_id = derived_id(at, "refined", ns, m, cause)
            out.append(
                (
                    MemoryCreated(
                        memory_id=new_id,
                        text=old.text,
                        category=old.category,  # type: ignore[arg-type]
                        kind=old.kind,  # type: ignore[arg-type]
                        importance=old.importance,
                        entities=list(old.entities),
                        content_hash=content_hash(ns, old.text),
                        source_turn_ids=list(old.source_turn_ids),
                        subject=old.subject,
                        slot=old.slot,
                        evidence={**ev, "refines": m},
                    ),
                    f"refine:{m}",
                )
            )
            out.append(
                (
                    MemorySuperseded(
                        memory_id=m,
                        superseded_by=new_id,
                        valid_until=at,
                        reason="evolution_refine",
                        evidence=ev,
                    ),
                    f"supersede:{m}",
                )
            )
        return out
    if c.action == "merge" and len(c.memory_ids) >= 2:
        keep, *rest = sorted(c.memory_ids, key=lambda m: (-memory.states[m].q_value, m))
        return [
            (MemoryArchived(memory_id=m, rule="evolution_merge", merged_into=keep, evidence=ev), m)
            for m in rest
        ]
    return []


async def evolve(
    states: list[PartitionState],
    settings: Settings,
    sink: Sink,
    memory_topic: str,
    *,
    namespaces: set[str] | None = None,
    apply: bool = False,
) -> list[dict[str, Any]]:
    reports = []
    for state in states:
        async with state.lock:
            for ns in sorted(state.namespaces):
                if namespaces and ns not in namespaces:
                    continue
                memory = state.namespaces[ns]
                at = state.watermark(ns)
                views = []
                for mid, s in memory.states.items():
                    count, last = state.usage(ns, mid)
                    views.append(
                        EvolutionView(
                            memory_id=mid,
                            namespace=ns,
                            category=s.category,
                            q_value=s.q_value,
                            created_at=s.created_at,
                            access_count=count,
                            last_access=last,
                            active=s.active,
                            pinned=s.pinned,
                            flashbulb=s.arousal >= 0.8,
                        )
                    )
                vectors = {v.memory_id: memory.vector(v.memory_id) for v in views if v.active}
                candidates = find_candidates(views, vectors, at)
                reports.append(
                    {
                        "namespace": ns,
                        "at": at.isoformat(),
                        "applied": apply,
                        "candidates": [
                            {
                                "level": c.level,
                                "action": c.action,
                                "memory_ids": list(c.memory_ids),
                                "evidence": c.evidence,
                            }
                            for c in candidates
                        ],
                    }
                )
                if apply and candidates:
                    await _apply(state, ns, at, candidates, settings, sink, memory_topic)
    return reports


async def _apply(
    state: PartitionState,
    ns: str,
    at: datetime,
    candidates: list[Candidate],
    settings: Settings,
    sink: Sink,
    memory_topic: str,
) -> None:
    counts: dict[str, int] = {}
    for c in candidates:
        counts[c.action] = counts.get(c.action, 0) + 1
    head = make_event(
        ConsolidationReported(
            counts=counts, actions=len(candidates), evidence={"kind": "evolution"}
        ),
        namespace=ns,
        occurred_at=at,
        producer="evolution",
        recorded_at=utc_now(),
        event_id=derived_id(at, "evolution", ns, *(m for c in candidates for m in c.memory_ids)),
        limits=settings.limits,
    )
    actions = (
        (payload, (str(i), tag))
        for i, c in enumerate(candidates)
        for payload, tag in _payloads(c, state, ns, at, head.event_id)
    )
    envs = caused_by(
        head, actions, producer="evolution", kind="evolution-action", limits=settings.limits
    )
    await emit(state, [head, *envs], sink, memory_topic)
