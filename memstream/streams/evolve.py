"""Evolution in the worker: candidates with their evidence, events when applied.

Runs on demand (``memstream evolve [--apply]``, a dry run by default) and on its own: the
maintenance calls :func:`evolve` with ``trigger`` when ``core.evolution_apply.evolution_due``
says so (6 hours of event time or 100+ learned Q updates since the namespace's last run),
at that input event's time. A scheduled run writes its ``ConsolidationReported`` (evidence
``kind: evolution``, the trigger and the counts) even when it changes nothing: the report
is what starts the trigger over, on the log, so a restart and a rebuild decide alike. It
leaves the stale rule to the dream cycle's forgetting (which knows importance and tiers).

What an applied candidate writes (rule-based, ``core.evolution_apply``):
deprecate -> ``MemoryArchived``; archive (stale, on demand only) -> ``MemoryArchived``;
refine -> a rewrite (``MemoryCreated`` at Q 0.5 superseding the old one) when the rules
change the text, else nothing; merge (near-identical, or one text covering another,
``core.evolution.merge_candidates``) -> the most useful member keeps everything every
member said (``MemoryUpdated``: merged clauses, all source turns, entities and metadata),
the others ``MemoryArchived`` ``merged_into`` it; induce -> a new principle citing every
member's turns (``MemoryCreated``, slot ``induced``) when its evidence holds. Every event
names the report as cause and carries the candidate's evidence with the members' usage
history (accesses, Q updates and feedback outcomes over event time).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memstream.core.evolution import (
    Candidate,
    EvolutionConfig,
    EvolutionView,
    find_candidates,
)
from memstream.core.evolution_apply import (
    INDUCED_SLOT,
    Content,
    induced,
    merge_content,
    merge_groups,
    refined_text,
)
from memstream.core.hashing import content_hash
from memstream.core.memory_state import MemoryState
from memstream.infra.settings import Settings
from memstream.schemas._fields import utc_now
from memstream.schemas.envelope import make_event
from memstream.schemas.events import (
    ConsolidationReported,
    MemoryArchived,
    MemoryCreated,
    MemorySuperseded,
    MemoryUpdated,
)
from memstream.schemas.ids import derived_id
from memstream.streams.emit import caused_by, emit
from memstream.streams.partition_state import PartitionState
from memstream.streams.sinks import Sink

#: the worker's own runs: no stale rule (forgetting by time is the dream cycle's)
SCHEDULED = EvolutionConfig(stale_after=None)


def _content(s: MemoryState) -> Content:
    return Content(s.memory_id, s.text, s.entities, s.source_turn_ids, s.metadata, s.slot)


def _merged_candidates(candidates: list[Candidate]) -> list[Candidate]:
    """Pairs to merge joined into one merge per group of connected pairs."""
    pairs = [c for c in candidates if c.action == "merge"]
    if not pairs:
        return candidates
    rest = [c for c in candidates if c.action != "merge"]
    merges = []
    for group in merge_groups(c.memory_ids for c in pairs):  # type: ignore[misc]
        members = set(group)
        parts = [c for c in pairs if set(c.memory_ids) <= members]
        usage = {k: v for c in parts for k, v in c.evidence.get("usage", {}).items()}
        ev = {
            "similarity": {"-".join(c.memory_ids): c.evidence.get("similarity") for c in parts},
            "match": {"-".join(c.memory_ids): c.evidence.get("match") for c in parts},
            "covered_by": {
                c.evidence["covered"]: c.evidence["covered_by"]
                for c in parts
                if "covered" in c.evidence
            },
            "category": parts[0].evidence.get("category"),
            "usage": usage,
        }
        merges.append(Candidate("similar", "merge", tuple(group), ev))
    return rest + merges


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
            text = refined_text(old.text, old.subject, old.created_at)
            if text is None:
                continue  # the rules find nothing to improve: no copy of the same text
            new_id = derived_id(at, "refined", ns, m, cause)
            out.append(
                (
                    MemoryCreated(
                        memory_id=new_id,
                        text=text,
                        category=old.category,  # type: ignore[arg-type]
                        kind=old.kind,  # type: ignore[arg-type]
                        importance=old.importance,
                        entities=list(old.entities),
                        content_hash=content_hash(ns, text),
                        source_turn_ids=list(old.source_turn_ids),
                        subject=old.subject,
                        slot=old.slot,
                        evidence={**ev, "refines": m, "previous_text": old.text},
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
        members = [_content(memory.states[m]) for m in (keep, *rest)]
        merged = merge_content(members)
        head = memory.states[keep]
        out = [
            (
                MemoryUpdated(
                    memory_id=keep,
                    text=merged.text,
                    previous_text=head.text,
                    content_hash=content_hash(ns, merged.text),
                    entities=list(merged.entities),
                    source_turn_ids=list(merged.source_turn_ids),
                    metadata=merged.metadata,
                    evidence={**ev, "members": list(rest)},
                ),
                f"merge:{keep}",
            )
        ]
        out.extend(
            (MemoryArchived(memory_id=m, rule="evolution_merge", merged_into=keep, evidence=ev), m)
            for m in rest
        )
        return out
    if c.action == "induce":
        members = [_content(memory.states[m]) for m in c.memory_ids]
        existing = [_content(s) for s in memory.states.values() if s.slot == INDUCED_SLOT]
        rule = induced(members, existing)
        if rule is None:
            return []
        first = memory.states[c.memory_ids[0]]
        new_id = derived_id(at, "induced", ns, *c.memory_ids)
        return [
            (
                MemoryCreated(
                    memory_id=new_id,
                    text=rule.text,
                    category="principle",
                    importance=max(memory.states[m].importance for m in c.memory_ids),
                    entities=list(rule.entities),
                    content_hash=content_hash(ns, rule.text),
                    source_turn_ids=list(rule.source_turn_ids),
                    subject=first.subject,
                    slot=INDUCED_SLOT,
                    evidence={**ev, "induced_from": list(c.memory_ids)},
                ),
                f"induce:{new_id}",
            )
        ]
    return []


def _views(state: PartitionState, ns: str) -> list[EvolutionView]:
    memory = state.namespaces[ns]
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
                q_history=tuple(state.q_history.get((ns, mid), ())),
                accesses=tuple(state.accesses.get((ns, mid), ())),
                active=s.active,
                pinned=s.pinned,
                immutable=s.immutable,
                flashbulb=s.arousal >= 0.8,
                text=s.text,
                kind=s.kind,
                subject=s.subject,
                slot=s.slot,
                entities=s.entities,
            )
        )
    return views


async def evolve(
    states: list[PartitionState],
    settings: Settings,
    sink: Sink,
    memory_topic: str,
    *,
    namespaces: set[str] | None = None,
    apply: bool = False,
    at: datetime | None = None,
    trigger: str | None = None,
) -> list[dict[str, Any]]:
    """``trigger`` (a scheduled run: "period" or "q_updates"): applied, without the stale
    rule, and reported even when nothing changes."""
    config = SCHEDULED if trigger is not None else EvolutionConfig()
    apply = apply or trigger is not None
    reports = []
    for state in states:
        async with state.lock:
            for ns in sorted(state.namespaces):
                if namespaces and ns not in namespaces:
                    continue
                memory = state.namespaces[ns]
                when = at or state.watermark(ns)
                views = _views(state, ns)
                vectors = memory.vectors(v.memory_id for v in views if v.active)
                candidates = _merged_candidates(find_candidates(views, vectors, when, config))
                reports.append(
                    {
                        "namespace": ns,
                        "at": when.isoformat(),
                        "applied": apply,
                        **({"trigger": trigger} if trigger else {}),
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
                if apply and (candidates or trigger is not None):
                    await _apply(state, ns, when, candidates, settings, sink, memory_topic, trigger)
    return reports


async def _apply(
    state: PartitionState,
    ns: str,
    at: datetime,
    candidates: list[Candidate],
    settings: Settings,
    sink: Sink,
    memory_topic: str,
    trigger: str | None,
) -> None:
    counts: dict[str, int] = {}
    for c in candidates:
        counts[c.action] = counts.get(c.action, 0) + 1
    head = make_event(
        ConsolidationReported(
            counts=counts,
            actions=len(candidates),
            memories=len(state.namespaces[ns].states),
            evidence={"kind": "evolution", "trigger": trigger or "request"},
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
