"""The learning agents: access tracking with co-activation, Q-learning from feedback,
direct edits, and tier changes. Thin shells over ``core.qlearning``, ``core.coactivation``
and ``core.tiers``.

Every event they emit is applied to the partition's state at once and names its input as
causation, with an id derived from that input: a re-delivered input is recognised (its
id is in ``PartitionState.processed``) and changes nothing, even after a restart.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any

from memstream.core.coactivation import CoactivationConfig, plan_recall, spaced_uses
from memstream.core.hashing import content_hash
from memstream.core.lifecycle import MemoryView, Usage, retention
from memstream.core.qlearning import FeedbackView, QState, plan_q_updates
from memstream.core.relations import SPREAD_SOURCES, coactivated, fading, parse, spreading
from memstream.core.rule_extractor import find_entities
from memstream.core.scoped_feedback import EVIDENCE_KEY
from memstream.core.tiers import (
    TierConfig,
    TierView,
    entity_group_sizes,
    tier_change,
    topical_entities,
)
from memstream.infra.settings import Settings
from memstream.schemas._fields import utc_now
from memstream.schemas.envelope import Envelope, make_event
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import (
    Feedback,
    MemoryAccessed,
    MemoryArchived,
    MemoryCreated,
    MemoryEdit,
    MemoryPinned,
    MemoryReinforced,
    MemorySuperseded,
    MemoryUpdated,
    QValueUpdated,
    RelationAdded,
    RelationRemoved,
    TierChanged,
    TreeEdit,
    TreeNodeAdded,
    TreeNodeRemoved,
)
from memstream.schemas.ids import derived_id
from memstream.streams.consolidation import lifecycle_config
from memstream.streams.emit import Sent, caused_by, emit, send_all
from memstream.streams.partition_state import ParkedFeedback, PartitionState, PartitionStates
from memstream.streams.sinks import Sink

log = logging.getLogger("memstream.learning")

#: how long (wall clock, liveness only) feedback on an unknown recall stays parked for the
#: recall's MemoryAccessed before it is dead-lettered as ``unknown_query``; the agent never
#: waits meanwhile
RECALL_WAIT_S = 10.0


class Learning:
    def __init__(
        self,
        settings: Settings,
        states: PartitionStates,
        sink: Sink,
        memory_topic: str,
        alpha: float = 0.1,
    ) -> None:
        self.settings = settings
        self.states = states
        self.sink = sink
        self.memory_topic = memory_topic
        self.alpha = alpha
        self.coactivation = CoactivationConfig()
        self.tiers = TierConfig()
        self.lifecycle = lifecycle_config(settings)  # the forgetting curve the fade rule reads

    async def _emit(
        self,
        state: PartitionState,
        payloads: list[tuple[Any, str]],
        cause: Envelope[Any],
        agent: str,
    ) -> Sent:
        """Build, apply and send events caused by ``cause`` (tags make the derived ids unique).

        Returns the sends in flight: the agent holds the input's acknowledgement until they
        complete, without waiting for them before it reads the next input."""
        envs = caused_by(
            cause,
            ((payload, (tag,)) for payload, tag in payloads),
            producer=agent,
            kind=agent,
            limits=self.settings.limits,
        )
        pending = await send_all(state, envs, self.sink, self.memory_topic)
        state.processed.add(cause.event_id)
        return pending

    # --- access tracking --------------------------------------------------------------

    async def on_access(self, env: Envelope[Any], event: Any) -> Sent:
        state = await self.states.get(event.message.partition)
        async with state.lock:
            used_before = _uses_before(state, env, event.message.offset)
            state.apply_access(env, event.message.offset)  # no-op if the load folded it
            await self._release(state, env.namespace, env.payload.query_id)
            if env.event_id in state.processed:
                return []
            memory = state.memory(env.namespace)
            ids = [m.memory_id for m in env.payload.memories if m.memory_id in memory.states]
            stabilities = {mid: memory.states[mid].stability for mid in ids}
            fresh = spaced_uses(ids, used_before, env.occurred_at, self.coactivation.spacing)
            plan = plan_recall(ids, stabilities, self.coactivation, fresh)
            return await self._emit(
                state,
                [
                    (
                        MemoryReinforced(
                            memory_id=c.memory_id,
                            stability_before=c.stability_before,
                            stability_after=c.stability_after,
                            reason="coactivation",
                            evidence={
                                "rule": "hebbian",
                                "query_id": env.payload.query_id,
                                "co_retrieved": c.partners,
                            },
                        ),
                        c.memory_id,
                    )
                    for c in plan.reinforcements
                ]
                + _edges_used(memory, ids, fresh, env.payload.query_id),
                env,
                "access-tracker",
            )

    # --- feedback and edits --------------------------------------------------------------

    async def on_feedback(self, env: Envelope[Any], event: Any) -> Sent:
        state = await self.states.get(event.message.partition)
        fb = env.payload
        async with state.lock:
            if env.event_id in state.processed:
                return []  # already applied: a re-delivery changes nothing
            if isinstance(fb, MemoryEdit):
                return await self._emit(state, self._edit(state, env), env, "q-learner")
            if isinstance(fb, TreeEdit):
                return await self._emit(state, _tree_edit(env), env, "q-learner")
            if fb.query_id and (env.namespace, fb.query_id) not in state.recalls:
                # feedback can overtake its recall; on named memories it waits for the
                # question it is about (core/scoped_feedback.py)
                return [self._park(state, env)]
            return await self._emit(state, self._q_updates(state, env), env, "q-learner")

    def _park(self, state: PartitionState, env: Envelope[Feedback]) -> asyncio.Future[None]:
        """Feedback can overtake its recall's MemoryAccessed (they travel on different topics):
        it waits for the access tracker (``_release``) with its acknowledgement held, and the
        agent reads on; ``expire_parked`` dead-letters it if the recall never comes."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        key = (env.namespace, env.payload.query_id or "")
        state.parked.setdefault(key, []).append(ParkedFeedback(env, done, loop.time()))
        return done

    async def _apply_late(self, state: PartitionState, parked: ParkedFeedback) -> None:
        """Feedback on named memories whose recall never came: applied unscoped."""
        async with state.lock:
            await self._apply_parked(state, parked)

    async def _release(self, state: PartitionState, namespace: str, query_id: str) -> None:
        """The recall is here: apply the feedback that waited for it (caller holds the lock)."""
        for parked in state.parked.pop((namespace, query_id), []):
            if not parked.done.done():
                await self._apply_parked(state, parked)

    async def _apply_parked(self, state: PartitionState, parked: ParkedFeedback) -> None:
        """One parked feedback applied, its acknowledgement settled (caller holds the lock)."""
        if parked.env.event_id in state.processed:
            parked.done.set_result(None)
            return
        try:
            sends = await self._emit(
                state, self._q_updates(state, parked.env), parked.env, "q-learner"
            )
        except Exception as e:
            parked.done.set_exception(e)  # its agent dead-letters it
            return
        _settle_into(sends, parked.done)

    async def expire_parked(self) -> None:
        """Timer: feedback whose recall did not come within RECALL_WAIT_S is dead-lettered,
        unless it names its memories: then it applies to them without the question."""
        now = asyncio.get_running_loop().time()
        for state in self.states.loaded():
            for key, waiting in list(state.parked.items()):
                keep = []
                for parked in waiting:
                    if parked.done.done():
                        continue
                    if now - parked.since < RECALL_WAIT_S:
                        keep.append(parked)
                        continue
                    if parked.env.payload.memory_ids:
                        await self._apply_late(state, parked)
                        continue
                    parked.done.set_exception(
                        EventValidationError(
                            "unknown_query",
                            f"no recall {key[1]!r} is known in {key[0]!r} "
                            f"(waited {RECALL_WAIT_S:.0f} s for it)",
                            "payload.query_id",
                        )
                    )
                if keep:
                    state.parked[key] = keep
                else:
                    state.parked.pop(key, None)

    def _q_updates(self, state: PartitionState, env: Envelope[Feedback]) -> list[tuple[Any, str]]:
        fb: Feedback = env.payload
        memory = state.memory(env.namespace)
        recall = list(state.recalls.get((env.namespace, fb.query_id), ())) if fb.query_id else None
        wanted = set(fb.memory_ids) | {mid for mid, _ in recall or ()}
        qstates = {}
        if fb.memory_ids and not any(mid in memory.states for mid in fb.memory_ids):
            raise EventValidationError(
                "unknown_memory",
                f"no memory {', '.join(fb.memory_ids[:5])} is known in {env.namespace!r}",
                "payload.memory_ids",
            )
        for mid in wanted:
            s = memory.states.get(mid)
            if s is not None:
                _count, last_access = state.usage(env.namespace, mid)
                uses = [t for t in (last_access, s.last_q_update) if t is not None]
                qstates[mid] = QState(q=s.q_value, last_use=max(uses) if uses else s.created_at)
        # the question the feedback is about, when the recall is known: the memory keeps it
        # (core/scoped_feedback.py), so a negative stays with that question
        asked = state.recall_keys.get((env.namespace, fb.query_id)) if fb.query_id else None
        scope = {EVIDENCE_KEY: asked} if asked else {}
        out: list[tuple[Any, str]] = []
        for change in plan_q_updates(
            qstates, FeedbackView.of(fb), recall, env.occurred_at, self.alpha, bool(asked)
        ):
            out.append(
                (
                    QValueUpdated(
                        memory_id=change.memory_id,
                        old_q=change.old_q,
                        new_q=change.new_q,
                        reward=change.reward,
                        weight=change.weight,
                        alpha=change.alpha,
                        feedback_event_id=env.event_id,
                        evidence={
                            **change.evidence(),
                            "outcome": fb.outcome,
                            "reason": fb.reason,
                            **scope,
                        },
                    ),
                    f"q:{change.memory_id}",
                )
            )
        if fb.outcome == "correction" and fb.correction and fb.memory_ids:
            out.extend(self._correction(state, env, fb.memory_ids[0], fb.correction))
        return out

    def _correction(
        self, state: PartitionState, env: Envelope[Any], target: str, text: str
    ) -> list[tuple[Any, str]]:
        """A correction with the right statement: a new memory supersedes the wrong one."""
        old = state.memory(env.namespace).states.get(target)
        if old is None or not old.active:
            return []
        chash = content_hash(env.namespace, text)
        new_id = derived_id(env.occurred_at, "memory", env.namespace, chash, env.event_id)
        return [
            (
                MemoryCreated(
                    memory_id=new_id,
                    text=text,
                    category="correction",
                    kind=old.kind,  # type: ignore[arg-type]
                    confidence=1.0,
                    importance=max(old.importance, 0.7),
                    entities=list(old.entities),
                    content_hash=chash,
                    source_turn_ids=list(old.source_turn_ids),
                    subject=old.subject,
                    slot=old.slot,
                    evidence={
                        "decision": "correction",
                        "corrects": target,
                        "feedback_event_id": env.event_id,
                    },
                ),
                "correction:create",
            ),
            (
                MemorySuperseded(
                    memory_id=target,
                    superseded_by=new_id,
                    valid_until=env.occurred_at,
                    reason="user_correction",
                    evidence={"feedback_event_id": env.event_id},
                ),
                "correction:supersede",
            ),
        ]

    def _edit(self, state: PartitionState, env: Envelope[MemoryEdit]) -> list[tuple[Any, str]]:
        edit = env.payload
        current = state.memory(env.namespace).states.get(edit.memory_id)
        if current is None:  # dead-lettered by the agent, with this reason
            raise EventValidationError(
                "unknown_memory",
                f"no memory {edit.memory_id!r} is known in {env.namespace!r}",
                "payload.memory_id",
            )
        if edit.action in ("pin", "unpin", "lock"):
            pinned, immutable = edit.action != "unpin", edit.action == "lock"
            if (current.pinned, current.immutable) == (pinned, immutable):
                return []  # already so: a repeated request changes nothing
            return [
                (
                    MemoryPinned(
                        memory_id=edit.memory_id,
                        pinned=pinned,
                        immutable=immutable,
                        reason=edit.reason,
                        evidence={"edit_event_id": env.event_id, "action": edit.action},
                    ),
                    edit.action,
                )
            ]
        if edit.action == "delete":
            if current.status == "archived":
                return []
            return [
                (
                    MemoryArchived(
                        memory_id=edit.memory_id,
                        rule="user_delete",
                        evidence={"reason": edit.reason, "edit_event_id": env.event_id},
                    ),
                    "delete",
                )
            ]
        assert edit.text is not None
        return [
            (
                MemoryUpdated(
                    memory_id=edit.memory_id,
                    text=edit.text,
                    previous_text=current.text,
                    content_hash=content_hash(env.namespace, edit.text),
                    # re-derived from the new text (the old ones may no longer hold)
                    entities=list(find_entities(edit.text, current.entities)),
                    evidence={
                        "decision": "user_edit",
                        "reason": edit.reason,
                        "edit_event_id": env.event_id,
                    },
                ),
                "update",
            )
        ]

    # --- tiers (timer) ---------------------------------------------------------------------

    async def check_tiers(self) -> None:
        """Promote or demote by the tier rules, at each namespace's event-time watermark."""
        for state in self.states.loaded():
            async with state.lock:
                for ns, memory in list(state.namespaces.items()):
                    await self._tiers_of(state, ns, memory, state.watermark(ns))

    async def tiers_at(self, state: PartitionState, ns: str, at: datetime) -> None:
        """The tier rules for one namespace at ``at`` (the caller holds the state's lock),
        and the fading of its edges with disuse."""
        if ns in state.namespaces:
            await self._tiers_of(state, ns, state.namespaces[ns], at)
            faded = _faded_edges(state.namespaces[ns], ns, at, self.settings.limits)
            if faded:
                await emit(state, faded, self.sink, self.memory_topic)

    async def _tiers_of(self, state: PartitionState, ns: str, memory: Any, at: datetime) -> None:
        active = [s for s in memory.states.values() if s.active]
        groups = entity_group_sizes(
            (s.memory_id, topical_entities(s.entities, s.subject)) for s in active
        )
        changes = []
        for s in sorted(active, key=lambda m: m.memory_id):
            times = state.accesses.get((ns, s.memory_id), [])
            count, last = state.usage(ns, s.memory_id)
            retained = retention(MemoryView.from_state(s, Usage(count, last)), at, self.lifecycle)
            view = TierView(
                memory_id=s.memory_id,
                tier=s.tier,
                q_value=s.q_value,
                created_at=s.created_at,
                last_access=max(times) if times else None,
                access_times=tuple(times),
                q_high_since=state.q_high_since.get((ns, s.memory_id)),
                entity_group=groups.get(s.memory_id, 1),
                active=True,
                pinned=s.pinned,
                flashbulb=s.arousal >= 0.8,
                retention=retained,
                importance=s.importance,
            )
            decision = tier_change(view, at, self.tiers)
            if decision is None:
                continue
            to_tier, rule, evidence = decision
            change = make_event(
                TierChanged(
                    memory_id=s.memory_id,
                    from_tier=s.tier,
                    to_tier=to_tier,  # type: ignore[arg-type]
                    rule=rule,
                    evidence=evidence,
                ),
                namespace=ns,
                occurred_at=at,
                event_id=derived_id(at, "tier", ns, s.memory_id, s.last_event_id),
                producer="tier-keeper",
                recorded_at=utc_now(),
                limits=self.settings.limits,
            )
            changes.append(change)
        # one send for the namespace, acknowledged together: awaiting the broker after each
        # change held the partition (and its write path) for a round trip per memory. Each
        # decision reads its own memory only, so deciding all before applying any is the same
        if changes:
            await emit(state, changes, self.sink, self.memory_topic)


def _tree_edit(env: Envelope[TreeEdit]) -> list[tuple[Any, str]]:
    """A user's tree edit as its memory-log event. No state is consulted: the tree is a
    projection of these events (core/category_tree.py), and adding or removing twice leaves
    the same tree; a re-delivered edit derives the same event id and is dropped."""
    edit = env.payload
    cls = TreeNodeAdded if edit.action == "add" else TreeNodeRemoved
    evidence = {"edit_event_id": env.event_id, "action": edit.action}
    return [(cls(path=edit.path, reason=edit.reason, evidence=evidence), f"tree:{edit.action}")]


def _reconfident(
    memory: Any, key: tuple[str, str, str], confidence: float, evidence: dict[str, Any]
) -> RelationAdded:
    """The same edge with a new confidence (use or disuse); the rule that found it kept."""
    source, target, relation = key
    return RelationAdded(
        memory_id=source,
        target_id=target,
        relation=relation,  # type: ignore[arg-type]
        confidence=confidence,
        rule=memory.edge_rules.get(key, "coactivation"),
        evidence=evidence,
    )


def _faded_edges(memory: Any, ns: str, at: datetime, limits: Any) -> list[Envelope[Any]]:
    """The namespace's edges that faded with disuse by ``at`` (core/relations.fading), as
    events of the edge keeper: a lower confidence, or the edge removed below the floor."""
    out: list[Envelope[Any]] = []
    for (source, target, relation), current, faded, idle in fading(
        memory.edges, memory.edge_used, at, memory.edge_rules
    ):
        evidence = {"rule": "edge_disuse", "idle_days": idle, "faded_from": current}
        payload: Any = (
            RelationRemoved(
                memory_id=source,
                target_id=target,
                relation=relation,  # type: ignore[arg-type]
                reason="faded",
                evidence=evidence,
            )
            if faded is None
            else _reconfident(memory, (source, target, relation), faded, evidence)
        )
        out.append(
            make_event(
                payload,
                namespace=ns,
                occurred_at=at,
                event_id=derived_id(at, "edge-fade", ns, source, target, relation, str(current)),
                producer="edge-keeper",
                recorded_at=utc_now(),
                limits=limits,
            )
        )
    return out


def _uses_before(
    state: PartitionState, env: Envelope[Any], offset: int
) -> dict[str, list[datetime]]:
    """The access times of the recall's memories logged before this recall (a load that
    already folded it counted its own time once: that one is left out)."""
    if not isinstance(env.payload, MemoryAccessed):
        return {}
    folded = offset < state.access_next
    out: dict[str, list[datetime]] = {}
    for m in env.payload.memories:
        times = list(state.accesses.get((env.namespace, m.memory_id), ()))
        if folded and env.occurred_at in times:
            times.remove(env.occurred_at)
        out[m.memory_id] = times
    return out


def _edges_used(
    memory: Any, ids: list[str], fresh: frozenset[str], query_id: str
) -> list[tuple[Any, str]]:
    """What one recall teaches the graph: an edge whose two memories came back together
    grows more confident; the neighbours of the best results gain a little stability
    (spreading activation; core/relations.py). Only from memories the use may strengthen
    (``fresh``, the spacing effect): an edge one of whose ends is, a neighbour of one."""
    out: list[tuple[Any, str]] = []
    for (source, target, relation), before, after in coactivated(ids, memory.edges):
        if source not in fresh and target not in fresh:
            continue
        out.append(
            (
                _reconfident(
                    memory,
                    (source, target, relation),
                    after,
                    {
                        "strengthened_by": "coactivation",
                        "query_id": query_id,
                        "confidence_before": before,
                    },
                ),
                f"edge:{source}:{target}:{relation}",
            )
        )
    relations_of = {
        mid: memory.states[mid].relations for mid in ids[:SPREAD_SOURCES] if mid in fresh
    }
    near = {parse(e).other for entries in relations_of.values() for e in entries}
    stabilities = {
        mid: memory.states[mid].stability
        for mid in near
        if mid in memory.states and memory.states[mid].active and mid not in ids
    }
    for mid, before, after, source in spreading(ids, relations_of, stabilities):
        out.append(
            (
                MemoryReinforced(
                    memory_id=mid,
                    stability_before=before,
                    stability_after=after,
                    reason="spreading",
                    evidence={"rule": "spreading_activation", "query_id": query_id, "from": source},
                ),
                f"spread:{mid}",
            )
        )
    return out


def _settle_into(sends: Sent, done: asyncio.Future[None]) -> None:
    """Complete ``done`` when every send completed (or with the first failure)."""

    def finish(task: asyncio.Future[list[Any]]) -> None:
        if done.done():
            return
        if task.cancelled():
            done.cancel()
        elif task.exception() is not None:
            done.set_exception(task.exception())  # type: ignore[arg-type]
        else:
            done.set_result(None)

    asyncio.ensure_future(asyncio.gather(*sends)).add_done_callback(finish)
