"""Caps on a step's actions, and applying planned actions to a working copy of the views."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from memstream.core.lifecycle._model import (
    Action,
    MemoryView,
    StepResult,
)


def _cap(actions: Sequence[Action], cap: int) -> StepResult:
    cap = max(cap, 0)
    return StepResult(tuple(actions[:cap]), max(len(actions) - cap, 0))


def _take(
    batches: Sequence[Sequence[Action]], cap: int, *, first: bool
) -> tuple[list[Action], int]:
    """Whole batches (a merge, a summary with the one it replaces) while they fit under
    ``cap``; with ``first``, the first batch even if larger, so a big one is never stuck.
    Returns the actions taken and the number deferred."""
    taken: list[Action] = []
    deferred = 0
    for batch in batches:
        if len(taken) + len(batch) <= cap or (first and not taken and cap > 0):
            taken.extend(batch)
        else:
            deferred += len(batch)
    return taken, deferred


def apply_actions(
    memories: Iterable[MemoryView], actions: Iterable[Action], at: datetime
) -> tuple[MemoryView, ...]:
    """``memories`` after ``actions`` (what a fold of the resulting events would give)."""
    views: dict[str, MemoryView] = {m.memory_id: m for m in memories}
    for a in actions:
        if a.kind == "create":
            if a.created is not None:
                views[a.created.memory_id] = a.created
            continue
        m = views.get(a.memory_id)
        if m is None:
            continue
        if a.kind == "decay":
            if a.q_after is not None:
                m = replace(m, q_value=a.q_after, last_q_update=at)
            if a.retention_after is not None:
                m = replace(m, retention=a.retention_after)
        elif a.kind == "reinforce":
            m = replace(
                m,
                stability=a.stability_after if a.stability_after is not None else m.stability,
                retention=a.retention_after if a.retention_after is not None else m.retention,
            )
        elif a.kind == "supersede":
            m = replace(
                m,
                status="superseded",
                superseded_by=a.superseded_by,
                valid_until=a.valid_until if a.valid_until is not None else at,
            )
        elif a.kind == "archive":
            m = replace(m, status="archived", merged_into=a.merged_into)
        elif a.kind == "dormant":
            m = replace(m, tier="peripheral")
        elif a.kind == "rewrite":
            m = replace(
                m,
                text=a.text_after if a.text_after is not None else m.text,
                entities=a.entities_after if a.entities_after is not None else m.entities,
            )
        views[a.memory_id] = m
    return tuple(views.values())
