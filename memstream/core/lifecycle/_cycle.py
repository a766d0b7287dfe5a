"""One step, and the whole cycle run in order on a working copy."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from memstream.core.lifecycle._actions import (
    apply_actions,
)
from memstream.core.lifecycle._consolidation import (
    plan_consolidation,
    plan_summaries,
)
from memstream.core.lifecycle._decay import (
    plan_decay,
    plan_expiry,
    plan_rehearsal,
)
from memstream.core.lifecycle._forgetting import (
    plan_archival,
    plan_forgetting,
)
from memstream.core.lifecycle._model import (
    DEFAULT_CONFIG,
    STEPS,
    Action,
    CycleReport,
    LifecycleConfig,
    MemoryView,
    Step,
    StepResult,
    Usage,
    Vectors,
)


def with_usage(
    memories: Iterable[MemoryView], usage: Mapping[str, Usage] | None
) -> list[MemoryView]:
    if not usage:
        return list(memories)
    out = []
    for m in memories:
        u = usage.get(m.memory_id)
        out.append(
            m if u is None else replace(m, access_count=u.access_count, last_access=u.last_access)
        )
    return out


def plan_step(
    step: Step,
    memories: Sequence[MemoryView],
    vectors: Vectors | None,
    at: datetime,
    config: LifecycleConfig = DEFAULT_CONFIG,
) -> StepResult:
    if step == "decay":
        return plan_decay(memories, at, config)
    if step == "rehearsal":
        return plan_rehearsal(memories, at, config)
    if step == "expiry":
        return plan_expiry(memories, at, config)
    if step == "forgetting":
        return plan_forgetting(memories, vectors, at, config)
    if step == "consolidation":
        return plan_consolidation(memories, vectors, at, config)
    if step == "summaries":
        return plan_summaries(memories, at, config)
    return plan_archival(memories, at, config)


def plan_cycle(
    memories: Iterable[MemoryView],
    usage: Mapping[str, Usage] | None,
    vectors: Vectors | None,
    at: datetime,
    config: LifecycleConfig = DEFAULT_CONFIG,
) -> CycleReport:
    views: tuple[MemoryView, ...] = tuple(with_usage(memories, usage))
    actions: list[Action] = []
    counts: dict[str, int] = dict.fromkeys(STEPS, 0)
    deferred: dict[str, int] = dict.fromkeys(STEPS, 0)
    passes = 0
    for _ in range(max(config.max_passes, 1)):
        before = len(actions)
        for step in STEPS:
            room = replace(  # the caps hold for the whole cycle, across passes
                config,
                max_actions_per_step=config.max_actions_per_step - counts[step],
                max_rehearsals=config.max_rehearsals - counts["rehearsal"],
            )
            result = plan_step(step, views, vectors, at, room)
            actions.extend(result.actions)
            counts[step] += len(result.actions)
            deferred[step] = result.deferred
            views = apply_actions(views, result.actions, at)
        if len(actions) == before:
            break
        passes += 1
        if any(deferred.values()):
            break
    return CycleReport(at, tuple(actions), counts, deferred, passes)
