"""Steps on time alone: decay of idle memories, rehearsal of useful ones, expiry of plans and tasks."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from memstream.core.lifecycle._actions import (
    _cap,
)
from memstream.core.lifecycle._model import (
    DEFAULT_CONFIG,
    Action,
    LifecycleConfig,
    MemoryView,
    StepResult,
    _iso,
    _latest,
    _r,
)
from memstream.core.lifecycle._retention import (
    _forgetting_days,
    _since_use,
    retention,
    retention_for,
    stability_for,
    tier_rate,
)
from memstream.core.qlearning import days_between as _days
from memstream.core.qlearning import utility_decay


def plan_decay(
    memories: Iterable[MemoryView], at: datetime, config: LifecycleConfig = DEFAULT_CONFIG
) -> StepResult:
    planned: list[tuple[float, Action]] = []
    for m in memories:
        if not m.eligible or tier_rate(m, config) <= 0.0:
            continue  # frozen: a dormant memory neither decays nor drifts
        days = _days(_latest(m.last_access, m.last_q_update, m.created_at), at)
        q_after = utility_decay(m.q_value, days, config.decay_rate)
        r = retention(m, at, config)
        q_moved = abs(q_after - m.q_value) >= config.min_change
        r_moved = m.retention is None or abs(r - m.retention) >= config.min_change
        if not (q_moved or r_moved):
            continue
        evidence = {
            "decay_days": _r(days),
            "q_before": _r(m.q_value),
            "q_after": _r(q_after),
            "retention_before": None if m.retention is None else _r(m.retention),
            "retention_after": _r(r),
            "model": config.retention_model,
            "stability": _r(m.stability),
            "tier": m.tier,
            "tier_rate": _r(tier_rate(m, config)),
        }
        action = Action(
            "decay",
            "decay",
            m.memory_id,
            "utility_decay" if q_moved else "retention_update",
            evidence,
            q_after=q_after if q_moved else None,
            retention_after=r,
        )
        planned.append((abs(q_after - m.q_value) + abs(r - (m.retention or 0.0)), action))
    planned.sort(key=lambda p: (-p[0], p[1].memory_id))  # the biggest moves first under the cap
    return _cap([a for _, a in planned], config.max_actions_per_step)


def plan_rehearsal(
    memories: Iterable[MemoryView], at: datetime, config: LifecycleConfig = DEFAULT_CONFIG
) -> StepResult:
    planned: list[Action] = []
    chosen = sorted(
        (m for m in memories if m.eligible),
        key=lambda m: (-m.q_value, -m.importance, m.memory_id),
    )
    for m in chosen:
        if m.q_value <= config.rehearse_q_above and m.importance < config.rehearse_importance_min:
            continue  # nothing says it is worth keeping: it fades by time alone
        if tier_rate(m, config) <= 0.0:
            continue  # frozen: nothing fades, nothing to rehearse
        days = _forgetting_days(m, at, config)
        before = retention_for(m.stability, days, config)
        if before >= config.rehearse_below:
            continue
        needed = stability_for(config.rehearsal_target, days, config)
        after = min(max(m.stability * config.rehearsal_factor, needed), config.max_stability)
        if after <= m.stability:
            continue
        r_after = retention_for(after, days, config)
        evidence = {
            "retention_before": _r(before),
            "retention_after": _r(r_after),
            "stability_before": _r(m.stability),
            "stability_after": _r(after),
            "q_value": _r(m.q_value),
            "importance": _r(m.importance),
            "days_since_use": _r(_days(_since_use(m), at)),
            "tier_rate": _r(tier_rate(m, config)),
        }
        planned.append(
            Action(
                "rehearsal",
                "reinforce",
                m.memory_id,
                "rehearsal",
                evidence,
                stability_after=after,
                retention_after=r_after,
            )
        )
    return _cap(planned, min(config.max_rehearsals, config.max_actions_per_step))


def _due(m: MemoryView) -> datetime | None:
    """A task's due date: its valid_until, else the date it names after it was said ("by
    Friday": the rule extractor dates the task, valid_from, and leaves its end open)."""
    if m.valid_until is not None:
        return m.valid_until
    if m.valid_from is not None and m.valid_from > m.created_at:
        return m.valid_from
    return None


def plan_expiry(
    memories: Iterable[MemoryView], at: datetime, config: LifecycleConfig = DEFAULT_CONFIG
) -> StepResult:
    planned: list[Action] = []
    for m in sorted(memories, key=lambda m: m.memory_id):
        if not m.eligible:
            continue
        if m.category == "commitment" and m.resolved_at is None:
            # a task's valid_until is its due date, not the end of its truth: overdue
            # and never reported done, it stays pending; 90 days past due it is stale
            due = _due(m)
            if due is not None and at - due >= config.commitment_archive_after:
                late = {"due": _iso(due), "days_overdue": _r(_days(due, at))}
                # Over, not gone: superseded, so a question about the past still finds
                # the plan. Its end is now (when it went stale), not the due date: the
                # plan was not false after its date, only never reported done.
                planned.append(Action("expiry", "supersede", m.memory_id, "stale_commitment", late))
            continue
        if m.valid_until is not None and m.valid_until <= at:
            ev: dict[str, Any] = {"valid_until": _iso(m.valid_until)}
            planned.append(
                Action(
                    "expiry",
                    "supersede",
                    m.memory_id,
                    "valid_until_passed",
                    ev,
                    valid_until=m.valid_until,
                )
            )
        elif (
            m.confidence < config.confirm_confidence
            and m.reinforcements == 0
            and at - m.created_at >= config.confirm_within
        ):
            ev = {
                "confidence": _r(m.confidence),
                "reinforcements": 0,
                "age_days": _r(_days(m.created_at, at)),
            }
            planned.append(Action("expiry", "archive", m.memory_id, "unconfirmed", ev))
        elif (
            m.category == "commitment"
            and m.resolved_at is not None
            and at - m.resolved_at >= config.commitment_archive_after
        ):
            ev = {"resolved_at": _iso(m.resolved_at), "days_resolved": _r(_days(m.resolved_at, at))}
            planned.append(Action("expiry", "archive", m.memory_id, "resolved_commitment", ev))
    return _cap(planned, config.max_actions_per_step)
