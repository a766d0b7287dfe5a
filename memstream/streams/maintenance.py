"""Scheduled maintenance: the dream cycle and the tier rules at each event-time boundary.

Every agent calls :meth:`Maintenance.before` with an input event's namespace and time before
it applies the event; when the namespace's clock reaches a new boundary (``core.schedule``)
the cycle runs there first, at the boundary's time. So the same input stream gives the same
cycles, and a months-long replay consolidates exactly as the live system did. With
``dream_every_hours = 0`` the cycle runs on demand only and tiers follow the timer.

Evolution is checked before input events (not on the timer, which would place its report
by wall-clock chance), after the cycle: when ``core.evolution_apply.
evolution_due`` holds for the namespace (6 hours of event time or 100+ learned Q updates
since its last run: ``evolution_every_hours``, ``evolution_q_updates``) it runs at the
input event's time (``streams.evolve``)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from memstream.core.evolution_apply import EvolutionTrigger, evolution_due
from memstream.core.schedule import due_boundary
from memstream.infra.settings import Settings
from memstream.schemas._fields import utc_now
from memstream.schemas.envelope import encode, make_event, record_headers
from memstream.schemas.events import WorkflowObserved
from memstream.schemas.ids import derived_id
from memstream.streams.consolidation import run_cycle
from memstream.streams.evolve import evolve
from memstream.streams.learning import Learning
from memstream.streams.partition_state import PartitionState, PartitionStates
from memstream.streams.sinks import Sink

log = logging.getLogger("memstream.maintenance")

WORKFLOW = "consolidation"


class Maintenance:
    def __init__(
        self,
        settings: Settings,
        states: PartitionStates,
        learning: Learning,
        sink: Sink,
        memory_topic: str,
        workflow_topic: str,
    ) -> None:
        self.settings = settings
        self.states = states
        self.learning = learning
        self.sink = sink
        self.memory_topic = memory_topic
        self.workflow_topic = workflow_topic
        hours = settings.dream_every_hours
        self.every = timedelta(hours=hours) if hours > 0 else None
        self.cycles = 0
        self.failures = 0
        self.trigger = EvolutionTrigger(
            every=timedelta(hours=settings.evolution_every_hours)
            if settings.evolution_every_hours > 0
            else None,
            q_updates=settings.evolution_q_updates if settings.evolution_q_updates > 0 else None,
        )
        self.evolutions = 0

    def due(self, state: PartitionState, namespace: str, at: datetime) -> datetime | None:
        """The boundary whose cycle must run before an input event at ``at``, if any."""
        if self.every is None:
            return None
        return due_boundary(state.last_cycle.get(namespace), at, self.every)

    async def before(self, state: PartitionState, namespace: str, at: datetime) -> None:
        """Run the namespace's due cycle (if any), then evolution if due, before an input
        event at ``at``."""
        await self._cycle_if_due(state, namespace, at)
        await self.evolve_if_due(state, namespace, at)

    async def _cycle_if_due(self, state: PartitionState, namespace: str, at: datetime) -> None:
        boundary = self.due(state, namespace, at)
        if boundary is not None:
            await self.run(state, namespace, boundary)

    async def evolve_if_due(self, state: PartitionState, namespace: str, at: datetime) -> None:
        """Evolution for the namespace before an input event at ``at``, if its trigger holds."""
        if namespace not in state.namespaces:
            return  # nothing remembered yet
        reason = evolution_due(
            state.evolution_since.get(namespace),
            state.q_updates_since.get(namespace, 0),
            at,
            self.trigger,
        )
        if reason is None:
            return
        try:
            await evolve(
                [state],
                self.settings,
                self.sink,
                self.memory_topic,
                namespaces={namespace},
                at=at,
                trigger=reason,
            )
        except Exception as e:
            # housekeeping like the cycle: never stops the write path; tried again at the next
            # period (the clock starts over here, in memory only: the log has no report)
            state.evolution_since[namespace] = at
            state.q_updates_since[namespace] = 0
            await self._failed("evolution", namespace, at, e)
            return
        self.evolutions += 1

    async def tick(self) -> None:
        """Timer: tiers at the watermark when unscheduled; else cycles for namespaces whose
        clock moved without an input event reaching ``before`` (state loaded from the log)."""
        if self.every is None:
            await self.learning.check_tiers()
            return
        for state in self.states.loaded():
            for ns in sorted(state.namespaces):
                # the cycle only: evolution waits for an input event, whose place in the
                # stream is the same on every run (from the timer, its report landed before
                # or after the cycle's tier changes by wall-clock chance)
                await self._cycle_if_due(state, ns, state.watermark(ns))

    async def run(self, state: PartitionState, namespace: str, at: datetime) -> None:
        state.cycled(namespace, at)  # before running: a failing cycle is not retried in a loop
        if namespace not in state.namespaces:
            return  # nothing remembered yet: nothing to consolidate
        try:
            reports = await run_cycle(
                [state],
                self.settings,
                self.sink,
                self.memory_topic,
                namespaces={namespace},
                at=at,
                apply=True,
                trigger="schedule",
            )
            async with state.lock:
                await self.learning.tiers_at(state, namespace, at)
        except Exception as e:
            # A cycle is housekeeping: its failure must not stop the write path. It is
            # reported as workflow telemetry and retried at the next boundary.
            await self._failed("scheduled cycle", namespace, at, e)
            return
        self.cycles += 1
        actions = sum(len(r["actions"]) for r in reports)
        if actions:
            counts = {k: v for r in reports for k, v in r["counts"].items() if v}
            await self._observe(namespace, at, "success", f"{actions} actions", counts)

    async def _failed(self, what: str, namespace: str, at: datetime, e: Exception) -> None:
        """Counted, logged with its traceback and reported as workflow telemetry."""
        self.failures += 1
        log.exception("%s for %s at %s failed", what, namespace, at.isoformat())
        await self._observe(namespace, at, "failure", f"{type(e).__name__}: {e}"[:500], {})

    async def _observe(
        self, namespace: str, at: datetime, outcome: str, detail: str, counts: dict[str, Any]
    ) -> None:
        env = make_event(
            WorkflowObserved(
                workflow=WORKFLOW,
                outcome=outcome,  # type: ignore[arg-type]
                detail=detail,
                evidence={"trigger": "schedule", "at": at.isoformat(), "counts": counts},
            ),
            namespace=namespace,
            occurred_at=at,
            producer="dream-cycle",
            recorded_at=utc_now(),
            event_id=derived_id(at, "cycle-observed", namespace, outcome),
            limits=self.settings.limits,
        )
        await (
            await self.sink.send(
                self.workflow_topic, env.key, encode(env), headers=record_headers(env)
            )
        )
