"""The dream cycle in the worker: plan with ``core.lifecycle`` over a partition's folded
state, and (with ``apply``) write every action as an event caused by one
``ConsolidationReported``. Dry runs write nothing."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from memstream.core.hashing import content_hash
from memstream.core.lifecycle import (
    Action,
    LifecycleConfig,
    MemoryView,
    Usage,
    plan_cycle,
    retention,
)
from memstream.core.retention import RetentionModel
from memstream.infra.settings import Settings
from memstream.schemas._fields import utc_now
from memstream.schemas.envelope import make_event
from memstream.schemas.events import (
    ConsolidationReported,
    MemoryArchived,
    MemoryCreated,
    MemoryReinforced,
    MemorySuperseded,
    MemoryUpdated,
    QValueUpdated,
    TierChanged,
)
from memstream.schemas.ids import derived_id
from memstream.streams.emit import caused_by, emit
from memstream.streams.partition_state import PartitionState
from memstream.streams.sinks import Sink


def action_events(
    action: Action, views: dict[str, MemoryView], cause: str, ns: str, at: datetime
) -> list[Any]:
    """The memory-log payloads a planned action writes (``views``: before the cycle)."""
    v = views.get(action.memory_id)
    ev = {"rule": action.rule, "step": action.step, **action.evidence}
    if action.kind == "decay" and action.q_after is not None and v is not None:
        return [
            QValueUpdated(
                memory_id=action.memory_id,
                old_q=v.q_value,
                new_q=action.q_after,
                reward=0.5,
                weight=0.0,
                alpha=0.0,
                feedback_event_id=cause,
                evidence=ev,
            )
        ]
    if action.kind == "reinforce" and action.stability_after is not None and v is not None:
        return [
            MemoryReinforced(
                memory_id=action.memory_id,
                stability_before=v.stability,
                stability_after=action.stability_after,
                reason="rehearsal",
                evidence=ev,
            )
        ]
    if action.kind == "supersede" and v is not None:
        return [
            MemorySuperseded(
                memory_id=action.memory_id,
                superseded_by=action.superseded_by,
                valid_until=action.valid_until or at,
                reason=action.rule[:64],
                evidence=ev,
            )
        ]
    if action.kind == "archive":
        return [
            MemoryArchived(
                memory_id=action.memory_id,
                rule=action.rule[:64],
                merged_into=action.merged_into,
                evidence=ev,
            )
        ]
    if action.kind == "dormant" and v is not None and v.tier != "peripheral":
        return [
            TierChanged(
                memory_id=action.memory_id,
                from_tier=v.tier,  # type: ignore[arg-type]
                to_tier="peripheral",  # type: ignore[arg-type]
                rule=action.rule[:64],
                evidence=ev,
            )
        ]
    if action.kind == "rewrite" and action.text_after and v is not None:
        return [
            MemoryUpdated(
                memory_id=action.memory_id,
                text=action.text_after,
                previous_text=v.text,
                content_hash=content_hash(ns, action.text_after),
                entities=list(action.entities_after or ()),
                source_turn_ids=list(action.sources_after or ()),
                evidence=ev,
            )
        ]
    if action.kind == "create" and action.created is not None:
        c = action.created
        return [
            MemoryCreated(
                memory_id=c.memory_id,
                text=c.text,
                category=c.category,  # type: ignore[arg-type]
                kind="note",
                importance=c.importance,
                confidence=c.confidence,
                entities=list(c.entities),
                content_hash=content_hash(ns, c.text),
                subject=c.subject,
                source_turn_ids=list(c.source_turn_ids),
                evidence=ev,
            )
        ]
    return []


def lifecycle_config(settings: Settings) -> LifecycleConfig:
    """The dream cycle's rules with the deployment's forgetting settings."""
    model: RetentionModel = "fsrs" if settings.retention_model == "fsrs" else "weibull"
    capacity = settings.memory_capacity if settings.memory_capacity > 0 else None
    return LifecycleConfig(retention_model=model, default_capacity=capacity)


async def run_cycle(
    states: list[PartitionState],
    settings: Settings,
    sink: Sink,
    memory_topic: str,
    *,
    namespaces: set[str] | None = None,
    at: datetime | None = None,
    apply: bool = False,
    config: LifecycleConfig | None = None,
    trigger: str = "request",
) -> list[dict[str, Any]]:
    config = config or lifecycle_config(settings)
    reports: list[dict[str, Any]] = []
    for state in states:
        async with state.lock:
            for ns in sorted(state.namespaces):
                if namespaces and ns not in namespaces:
                    continue
                memory = state.namespaces[ns]
                when = at or state.watermark(ns)
                views = {}
                for mid, s in memory.states.items():
                    count, last = state.usage(ns, mid)
                    view = MemoryView.from_state(s, Usage(count, last))
                    # Retention is derived from event time and stability, never stored: give the
                    # planner the current value so it only plans changes that become events.
                    views[mid] = replace(view, retention=retention(view, when, config))
                vectors = memory.vectors(mid for mid, s in memory.states.items() if s.active)
                report = plan_cycle(list(views.values()), {}, vectors, when, config)
                summary = {
                    "namespace": ns,
                    "at": when.isoformat(),
                    "memories": len(views),
                    "counts": report.counts,
                    "deferred": report.deferred,
                    "applied": apply,
                    "actions": [
                        {"step": a.step, "kind": a.kind, "memory_id": a.memory_id, "rule": a.rule}
                        for a in report.actions
                    ],
                }
                reports.append(summary)
                if apply and report.actions:
                    await _apply(
                        state, ns, when, report, views, settings, sink, memory_topic, trigger
                    )
    return reports


async def _apply(
    state: PartitionState,
    ns: str,
    at: datetime,
    report: Any,
    views: dict[str, MemoryView],
    settings: Settings,
    sink: Sink,
    memory_topic: str,
    trigger: str,
) -> None:
    head = make_event(
        ConsolidationReported(
            counts=report.counts,
            deferred=report.deferred,
            actions=len(report.actions),
            memories=len(views),
            evidence={"trigger": trigger},
        ),
        namespace=ns,
        occurred_at=at,
        producer="dream-cycle",
        recorded_at=utc_now(),
        event_id=derived_id(at, "cycle", ns, *sorted(views)),
        limits=settings.limits,
    )
    actions = (
        (payload, (str(i), str(j)))
        for i, action in enumerate(report.actions)
        for j, payload in enumerate(action_events(action, views, head.event_id, ns, at))
    )
    envs = caused_by(
        head, actions, producer="dream-cycle", kind="cycle-action", limits=settings.limits
    )
    await emit(state, [head, *envs], sink, memory_topic)
