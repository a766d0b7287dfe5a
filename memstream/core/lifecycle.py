"""The dream cycle: periodic upkeep of a namespace's memories, as pure planning rules.

Each step is a pure function of memory views, event time ``at`` and a config, returning
planned ``Action``s (each with a ``rule`` and a JSON-ready ``evidence`` dict) and how many
it deferred because of the per-cycle cap. ``plan_cycle`` runs the steps in order on a
working copy (``apply_actions``), so a later step sees what an earlier one decided, and
repeats the pass while it plans something (at most ``max_passes``): a merge can make an
earlier rule apply (the merged text now names what a near-duplicate names), and settling
that now is what makes planning again after applying the plan come back empty.

Caps: at most ``max_actions_per_step`` actions per step and cycle (``max_rehearsals`` for
rehearsal); the rest is reported in ``deferred`` and comes back next cycle. A merge, and a
summary with the summary it replaces, are planned whole; the first one even when larger
than the cap, so a big cluster is never stuck.

Exempt from every rule: memories that are not ``active``, and pinned, immutable or
flashbulb ones (they appear in no action). Only "live" memories (active, tier not
``peripheral``) take part in forgetting and consolidation.

Public API
----------
``MemoryView`` (+ ``MemoryView.from_state(state, usage, ...)``), ``Usage``,
``LifecycleConfig``, ``Action``, ``StepResult``, ``CycleReport``, ``STEPS``.

``plan_cycle(memories, usage, vectors, at, config=LifecycleConfig()) -> CycleReport``
    ``CycleReport(at, actions, counts, deferred, passes)``: counts and deferred per step.
    ``usage`` (memory id -> ``Usage``) overrides the views' access fields; ``vectors``
    (memory id -> embedding) feeds the similarity rules, memories without one skip them.
``apply_actions(memories, actions, at) -> tuple[MemoryView, ...]``
    The views after the actions (created memories appended). Applying a cycle's plan and
    planning again at the same ``at`` plans nothing, unless a cap deferred work.
``plan_step(step, memories, vectors, at, config) -> StepResult``: one step alone; also
``plan_decay``, ``plan_rehearsal``, ``plan_expiry`` (memories, at, config) and
``plan_forgetting``, ``plan_consolidation`` (memories, vectors, at, config),
``plan_summaries``, ``plan_archival`` (memories, at, config).
``retention(memory, at, config) -> float`` (on the tier's clock), ``tier_rate(memory, config)``

Steps, with action ``kind`` and the event the shell writes for it:

1. ``plan_decay``: Q drifts toward 0.5 (``core.qlearning.utility_decay``) over the days
   since the later of last access, last Q update and creation; retention is recomputed:
   Weibull ``exp(-(t / (120 S))^1.5)`` or FSRS ``(1 + t / (9 S))^-1`` (``retention_model``,
   the ``retention_model`` setting), S = stability, t = days since last access (or
   creation) times the tier's rate (``tier_rate``): the design's working 10x, episodic 3x,
   semantic 1x, dormant frozen, mapped as trivia (importance < 0.3) in the working tier
   10x, the rest of the working tier 3x, core 1x, peripheral frozen (no decay, no
   rehearsal). FSRS keeps the exponent -1 (FSRS v4): with the factor 1/9 it is what makes
   S the days until retention 0.9; -2 with the same factor would give 0.81 there.
   kind ``decay`` (``q_after`` when Q moved by at least ``min_change``: ``QValueUpdated``;
   ``retention_after``: the shell's projection).
2. ``plan_rehearsal``: retention < 0.3 (on the tier's clock) and worth keeping: feedback
   found it useful (Q > 0.5; every memory starts at 0.5 and unrated ones drift back
   there, so 0.5 says nothing) or importance >= 0.6 (the rest fade: ``core.tiers``,
   rule ``faded``): stability x1.5, or enough to bring retention back to 0.5 if more, at most
   ``max_stability``; at most ``max_rehearsals`` per cycle, most useful first. kind
   ``reinforce`` (``MemoryReinforced``, reason ``rehearsal``).
3. ``plan_expiry``: ``valid_until`` passed -> ``supersede`` (``MemorySuperseded``);
   confidence < 0.40, never reinforced, 30+ days old -> ``archive``; a commitment
   resolved 90+ days ago (``resolved_at``) -> ``archive`` (``MemoryArchived``). An open
   commitment's ``valid_until`` is its due date: overdue it stays pending, 90+ days past
   due -> ``archive`` (``stale_commitment``).
4. ``plan_forgetting`` (kind ``dormant``: ``TierChanged`` to peripheral), in order:
   ``contradiction``: same subject and slot and neither text's words contain the
   other's, or a ``contradicts`` link: the older side;
   ``utility_floor``: Q < 0.15 and 30+ days unused;
   ``redundancy``: cosine > 0.9 within namespace and category, not append categories,
   not about distinct items (see step 5): the lower-utility side;
   ``capacity``: live memories of a namespace above ``capacity_of(namespace)``
   (summaries not counted; the ``memory_capacity`` setting, 10,000 by default, 0 for no
   limit): the lowest utility first.
5. ``plan_consolidation``: merge categories (preference, entity, principle, and facts
   with the same subject) cluster by cosine > 0.85 within namespace and category, around
   the most useful memory, joining only if compatible with every member (same subject
   and slot when both set; entity sets and capitalised-name sets nested, so "Nike Air
   Max" and "Nike Pegasus" stay apart); the leader gets the merged text (clauses
   deduplicated, covered clauses dropped) -> ``rewrite`` (``MemoryUpdated``); the others
   ``archive`` with ``merged_into``. Repeated until no cluster forms. Append categories
   (moment, decision, any ``episode``) only lose exact duplicates (normalized text): the
   later ones ``archive`` into the earliest.
6. ``plan_summaries``: a category (not ``summary``) with more than 10 live memories
   gets a summary memory -> ``create`` (``MemoryCreated``, category ``summary``,
   subject = the category); skipped when a summary of it was created at or after its
   newest member; an older summary is superseded by the new one.
7. ``plan_archival``: older than 90 days, importance < 0.3 (trivia on the extractor's
   spectrum, ``core.importance``), accessed <= 2 times, and
   the category not commitment, preference, decision, principle, correction or
   summary -> ``archive``.

Utility, wherever "lowest utility" decides, is Q, then importance, access count,
creation time and id (ascending = forgotten first).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from memstream.core.hashing import normalize
from memstream.core.memory_state import MemoryState
from memstream.core.qlearning import days_between as _days
from memstream.core.qlearning import utility_decay
from memstream.core.similarity import similarity_matrix
from memstream.schemas.ids import derived_id

Vectors = Mapping[str, NDArray[Any]]
Step = Literal[
    "decay", "rehearsal", "expiry", "forgetting", "consolidation", "summaries", "archival"
]
STEPS: tuple[Step, ...] = (
    "decay",
    "rehearsal",
    "expiry",
    "forgetting",
    "consolidation",
    "summaries",
    "archival",
)
ActionKind = Literal["decay", "reinforce", "supersede", "archive", "dormant", "rewrite", "create"]

FLASHBULB_AROUSAL = 0.8  # same threshold as core.tagging.TagConfig


@dataclass(frozen=True, slots=True)
class LifecycleConfig:
    max_actions_per_step: int = 1000  # per step and cycle
    max_passes: int = 4  # the steps repeat until a pass plans nothing (see plan_cycle)
    min_change: float = 1e-3  # smaller Q / retention moves are not worth an event
    # 1. decay and retention
    decay_rate: float = 0.01
    retention_model: Literal["weibull", "fsrs"] = "weibull"
    # per-tier decay rates: how many days of forgetting a day without use counts for (see
    # ``tier_rate``); 0 freezes a memory (no decay, no rehearsal)
    rate_working: float = 10.0  # trivia (importance < archive_importance_below), working tier
    rate_episodic: float = 3.0  # the rest of the working tier: new, not yet proven
    rate_semantic: float = 1.0  # core tier: proven knowledge
    rate_dormant: float = 0.0  # peripheral tier: out of the way, frozen
    weibull_scale_days: float = 120.0
    weibull_shape: float = 1.5
    fsrs_scale_days: float = 9.0
    # 2. rehearsal
    rehearse_below: float = 0.3
    rehearse_q_above: float = 0.5  # strictly above: 0.5 is where unrated memories sit
    rehearse_importance_min: float = 0.6
    rehearsal_factor: float = 1.5
    rehearsal_target: float = 0.5
    max_rehearsals: int = 50
    max_stability: float = 100.0
    # 3. expiry
    confirm_confidence: float = 0.40
    confirm_within: timedelta = timedelta(days=30)
    commitment_archive_after: timedelta = timedelta(days=90)
    # 4. strategic forgetting
    utility_floor: float = 0.15
    floor_unused: timedelta = timedelta(days=30)
    redundancy_similarity: float = 0.9
    capacity: tuple[tuple[str, int], ...] = ()  # (namespace, live memories allowed)
    default_capacity: int | None = None  # None: no limit
    # 5. consolidation
    cluster_similarity: float = 0.85
    merge_categories: frozenset[str] = frozenset({"preference", "entity", "fact", "principle"})
    subject_bound_categories: frozenset[str] = frozenset({"fact"})  # merge only same subject
    append_categories: frozenset[str] = frozenset({"moment", "decision"})
    # 6. summaries
    summary_threshold: int = 10
    summary_max_clauses: int = 20
    summary_importance: float = 0.5
    # 7. archival
    archive_after: timedelta = timedelta(days=90)
    archive_importance_below: float = 0.3
    archive_max_access: int = 2
    archive_keep_categories: frozenset[str] = frozenset(
        {"commitment", "preference", "decision", "principle", "correction", "summary"}
    )

    def capacity_of(self, namespace: str) -> int | None:
        for ns, cap in self.capacity:
            if ns == namespace:
                return cap
        return self.default_capacity


@dataclass(frozen=True, slots=True)
class Usage:
    access_count: int = 0
    last_access: datetime | None = None


@dataclass(frozen=True, slots=True)
class MemoryView:
    """What the cycle reads of a memory: MemoryState fields plus usage and derived flags."""

    memory_id: str
    namespace: str
    text: str
    category: str
    created_at: datetime
    kind: str = "note"
    status: str = "active"
    tier: str = "working"
    importance: float = 0.5
    confidence: float = 1.0
    stability: float = 1.0
    q_value: float = 0.5
    entities: tuple[str, ...] = ()
    subject: str | None = None
    slot: str | None = None
    valid_until: datetime | None = None
    valid_from: datetime | None = None
    reinforcements: int = 0
    last_q_update: datetime | None = None
    access_count: int = 0
    last_access: datetime | None = None
    retention: float | None = None  # last planned retention; None: never computed
    resolved_at: datetime | None = None  # commitments: when they were kept or dropped
    contradicts: tuple[str, ...] = ()  # ids a contradiction detector linked to this one
    pinned: bool = False
    immutable: bool = False
    flashbulb: bool = False
    merged_into: str | None = None
    superseded_by: str | None = None
    source_turn_ids: tuple[str, ...] = ()

    @classmethod
    def from_state(
        cls,
        state: MemoryState,
        usage: Usage | None = None,
        *,
        retention: float | None = None,
        resolved_at: datetime | None = None,
        contradicts: Sequence[str] = (),
        immutable: bool = False,
        flashbulb_arousal: float = FLASHBULB_AROUSAL,
    ) -> MemoryView:
        u = usage or Usage()
        return cls(
            memory_id=state.memory_id,
            namespace=state.namespace,
            text=state.text,
            category=state.category,
            created_at=state.created_at,
            kind=state.kind,
            status=state.status,
            tier=state.tier,
            importance=state.importance,
            confidence=state.confidence,
            stability=state.stability,
            q_value=state.q_value,
            entities=state.entities,
            subject=state.subject,
            slot=state.slot,
            valid_until=state.valid_until,
            valid_from=state.valid_from,
            reinforcements=state.reinforcements,
            last_q_update=state.last_q_update,
            access_count=u.access_count,
            last_access=u.last_access,
            retention=retention,
            resolved_at=resolved_at,
            contradicts=tuple(contradicts),
            pinned=state.pinned,
            immutable=immutable or state.immutable,
            flashbulb=state.arousal >= flashbulb_arousal,
            merged_into=state.merged_into,
            superseded_by=state.superseded_by,
            source_turn_ids=state.source_turn_ids,
        )

    @property
    def exempt(self) -> bool:
        return self.pinned or self.immutable or self.flashbulb

    @property
    def eligible(self) -> bool:
        """Active and not exempt: the rules may act on it."""
        return self.status == "active" and not self.exempt

    @property
    def live(self) -> bool:
        return self.status == "active" and self.tier != "peripheral"


@dataclass(frozen=True, slots=True)
class Action:
    step: Step
    kind: ActionKind
    memory_id: str
    rule: str
    evidence: dict[str, Any] = field(default_factory=dict)
    q_after: float | None = None
    retention_after: float | None = None
    stability_after: float | None = None
    text_after: str | None = None
    entities_after: tuple[str, ...] | None = None
    sources_after: tuple[str, ...] | None = None  # a merge leader: its members' turns too
    merged_into: str | None = None
    superseded_by: str | None = None
    valid_until: datetime | None = None
    created: MemoryView | None = None


@dataclass(frozen=True, slots=True)
class StepResult:
    actions: tuple[Action, ...] = ()
    deferred: int = 0  # actions the per-cycle cap left for the next cycle


@dataclass(frozen=True, slots=True)
class CycleReport:
    at: datetime
    actions: tuple[Action, ...]
    counts: dict[str, int]  # planned actions per step, every step listed
    deferred: dict[str, int]  # capped actions per step, every step listed
    passes: int = 1  # passes that planned something (see plan_cycle)

    def of_step(self, step: Step) -> tuple[Action, ...]:
        return tuple(a for a in self.actions if a.step == step)


# --- helpers -------------------------------------------------------------------------


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def _r(x: float) -> float:
    return round(x, 6)


def _latest(*times: datetime | None) -> datetime | None:
    known = [t for t in times if t is not None]
    return max(known) if known else None


def utility_key(m: MemoryView) -> tuple[float, float, int, datetime, str]:
    return (m.q_value, m.importance, m.access_count, m.created_at, m.memory_id)


def _since_use(m: MemoryView) -> datetime:
    return (
        m.last_access
        if m.last_access is not None and m.last_access > m.created_at
        else m.created_at
    )


def tier_rate(m: MemoryView, config: LifecycleConfig = LifecycleConfig()) -> float:
    """How fast ``m`` forgets, by the design's four tiers mapped onto this project's
    (``core.tiers.SCHEME``): peripheral is dormant (frozen), core is semantic (1x), the
    working tier is episodic (3x), and trivia in it (importance under the archival
    threshold: small talk) is the design's working memory (10x)."""
    if m.tier == "peripheral":
        return config.rate_dormant
    if m.tier == "core":
        return config.rate_semantic
    if m.importance < config.archive_importance_below:
        return config.rate_working
    return config.rate_episodic


def _forgetting_days(m: MemoryView, at: datetime, config: LifecycleConfig) -> float:
    return _days(_since_use(m), at) * max(tier_rate(m, config), 0.0)


def retention(m: MemoryView, at: datetime, config: LifecycleConfig = LifecycleConfig()) -> float:
    """Retention at ``at`` on the tier's clock; a frozen (dormant) memory keeps the value it
    was last given, or its semantic-rate value when it never had one."""
    if tier_rate(m, config) <= 0.0:
        if m.retention is not None:
            return m.retention
        return retention_for(m.stability, _days(_since_use(m), at) * config.rate_semantic, config)
    return retention_for(m.stability, _forgetting_days(m, at, config), config)


def retention_for(stability: float, days: float, config: LifecycleConfig) -> float:
    s = max(stability, 1e-9)
    if config.retention_model == "fsrs":
        return 1.0 / (1.0 + days / (config.fsrs_scale_days * s))
    return math.exp(-((days / (config.weibull_scale_days * s)) ** config.weibull_shape))


def stability_for(target: float, days: float, config: LifecycleConfig) -> float:
    """The stability at which retention after ``days`` is ``target`` (inverse of the curve)."""
    if days <= 0.0:
        return 0.0
    if config.retention_model == "fsrs":
        return days / (config.fsrs_scale_days * (1.0 / target - 1.0))
    scale = float((-math.log(target)) ** (1.0 / config.weibull_shape))
    return days / (config.weibull_scale_days * scale)


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


# --- 1. decay and retention ----------------------------------------------------------


def plan_decay(
    memories: Iterable[MemoryView], at: datetime, config: LifecycleConfig = LifecycleConfig()
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


# --- 2. rehearsal --------------------------------------------------------------------


def plan_rehearsal(
    memories: Iterable[MemoryView], at: datetime, config: LifecycleConfig = LifecycleConfig()
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


# --- 3. expiry -----------------------------------------------------------------------


def _due(m: MemoryView) -> datetime | None:
    """A task's due date: its valid_until, else the date it names after it was said ("by
    Friday": the rule extractor dates the task, valid_from, and leaves its end open)."""
    if m.valid_until is not None:
        return m.valid_until
    if m.valid_from is not None and m.valid_from > m.created_at:
        return m.valid_from
    return None


def plan_expiry(
    memories: Iterable[MemoryView], at: datetime, config: LifecycleConfig = LifecycleConfig()
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
                planned.append(Action("expiry", "archive", m.memory_id, "stale_commitment", late))
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


# --- text and item rules (forgetting and consolidation) ---------------------------

_CLAUSE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"\w+", re.UNICODE)


def clauses(text: str) -> list[str]:
    return [
        c.strip().rstrip(".;!? ").strip() for c in _CLAUSE_SPLIT.split(text) if c.strip(" .;!?\n")
    ]


def merge_clauses(texts: Sequence[str]) -> list[str]:
    """Clauses of ``texts`` in order, exact repeats and clauses another one covers dropped."""
    kept: list[tuple[str, frozenset[str]]] = []
    for text in texts:
        for clause in clauses(text):
            words = frozenset(normalize(clause).split())
            if not words or any(words <= k for _, k in kept):
                continue
            covered = [i for i, (_, k) in enumerate(kept) if k < words]
            if covered:  # the new clause says more than earlier ones: it takes the first's place
                kept[covered[0]] = (clause, words)
                kept = [kv for i, kv in enumerate(kept) if i not in covered[1:]]
            else:
                kept.append((clause, words))
    return [c for c, _ in kept]


def merged_text(texts: Sequence[str]) -> str:
    return "; ".join(merge_clauses(texts)) + "."


def names(text: str) -> frozenset[str]:
    """Capitalised words not opening a sentence: product, brand and place names, roughly."""
    found: set[str] = set()
    for clause in clauses(text):
        for word in _WORD.findall(clause)[1:]:  # a clause's first word is capitalised anyway
            if word[:1].isupper() and word != "I":
                found.add(word.casefold())
    return frozenset(found)


def _nested(a: frozenset[str], b: frozenset[str]) -> bool:
    return a <= b or b <= a


def _words(text: str) -> frozenset[str]:
    return frozenset(normalize(text).split())


class Item(Protocol):
    """What the item rules read of a memory (a ``MemoryView``, an evolution view)."""

    @property
    def category(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def subject(self) -> str | None: ...
    @property
    def slot(self) -> str | None: ...
    @property
    def entities(self) -> tuple[str, ...]: ...


def _ents(m: Item) -> frozenset[str]:
    return frozenset(e.casefold() for e in m.entities if e)


def distinct_items(a: Item, b: Item) -> bool:
    """About different things: subjects or slots differ, or the entity sets or capitalised
    names are not nested ("Nike Air Max" and "Nike Pegasus": same brand, two items)."""
    for x, y in ((a.subject, b.subject), (a.slot, b.slot)):
        if x is not None and y is not None and x.casefold() != y.casefold():
            return True
    return not (_nested(_ents(a), _ents(b)) and _nested(names(a.text), names(b.text)))


def compatible(a: Item, b: Item, config: LifecycleConfig = LifecycleConfig()) -> bool:
    """May ``a`` and ``b`` become one memory?"""
    if a.category in config.subject_bound_categories and (a.subject is None or b.subject is None):
        return False
    return not distinct_items(a, b)


# --- 4. strategic forgetting ---------------------------------------------------------


def _dormant(m: MemoryView, rule: str, evidence: dict[str, Any]) -> Action:
    return Action("forgetting", "dormant", m.memory_id, rule, {"from_tier": m.tier, **evidence})


def _older(a: MemoryView, b: MemoryView) -> tuple[MemoryView, MemoryView]:
    """(older, newer) by creation time, then id."""
    return (a, b) if (a.created_at, a.memory_id) <= (b.created_at, b.memory_id) else (b, a)


def _contradictions(views: Mapping[str, MemoryView]) -> list[Action]:
    live = sorted((m for m in views.values() if m.live), key=lambda m: m.memory_id)
    pairs: dict[tuple[str, str], str] = {}
    slots: dict[tuple[str, str, str], list[MemoryView]] = {}
    for m in live:
        if m.subject is not None and m.slot is not None and m.category != "summary":
            slots.setdefault((m.namespace, m.subject.casefold(), m.slot.casefold()), []).append(m)
        for other in m.contradicts:
            o = views.get(other)
            if (
                o is not None
                and o.live
                and o.namespace == m.namespace
                and o.memory_id != m.memory_id
            ):
                old, new = _older(m, o)
                pairs.setdefault((old.memory_id, new.memory_id), "linked")
    for group in slots.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if not _nested(_words(a.text), _words(b.text)):  # nested: a refinement
                    old, new = _older(a, b)
                    pairs.setdefault((old.memory_id, new.memory_id), "same_slot")
    actions: list[Action] = []
    done: set[str] = set()
    for (old_id, new_id), how in sorted(pairs.items()):
        old = views[old_id]
        if old.exempt or old_id in done:
            continue
        done.add(old_id)
        actions.append(
            _dormant(
                old,
                "contradiction",
                {"newer": new_id, "how": how, "subject": old.subject, "slot": old.slot},
            )
        )
    return actions


def _utility_floor(
    views: Mapping[str, MemoryView], at: datetime, config: LifecycleConfig
) -> list[Action]:
    actions: list[Action] = []
    for m in sorted(views.values(), key=lambda m: m.memory_id):
        if not (m.live and m.eligible) or m.q_value >= config.utility_floor:
            continue
        unused = at - _since_use(m)
        if unused >= config.floor_unused:
            ev = {"q_value": _r(m.q_value), "unused_days": _r(unused.total_seconds() / 86_400)}
            actions.append(_dormant(m, "utility_floor", ev))
    return actions


def _is_append(m: MemoryView, config: LifecycleConfig) -> bool:
    return m.category in config.append_categories or m.kind == "episode"


def _similar_pairs(
    members: Sequence[MemoryView], vectors: Vectors, threshold: float
) -> list[tuple[float, int, int]]:
    sims = similarity_matrix([vectors[m.memory_id] for m in members])
    idx = np.argwhere(np.triu(sims > threshold, k=1))
    return [(float(sims[i, j]), int(i), int(j)) for i, j in idx]


def _group(ms: Iterable[MemoryView], key: Any) -> list[tuple[Any, list[MemoryView]]]:
    groups: dict[Any, list[MemoryView]] = {}
    for m in sorted(ms, key=lambda m: m.memory_id):
        groups.setdefault(key(m), []).append(m)
    return sorted(groups.items(), key=lambda kv: kv[0])


def _redundancy(
    views: Mapping[str, MemoryView], vectors: Vectors, config: LifecycleConfig
) -> list[Action]:
    actions: list[Action] = []
    candidates = [
        m
        for m in views.values()
        if m.live
        and m.memory_id in vectors
        and not _is_append(m, config)
        and m.category != "summary"
    ]
    gone: set[str] = set()
    for _, members in _group(candidates, lambda m: (m.namespace, m.category)):
        found = _similar_pairs(members, vectors, config.redundancy_similarity)
        for sim, i, j in sorted(
            found, key=lambda p: (-p[0], members[p[1]].memory_id, members[p[2]].memory_id)
        ):
            a, b = members[i], members[j]
            if a.memory_id in gone or b.memory_id in gone:
                continue
            if distinct_items(a, b):  # similar wording, different things: not redundant
                continue
            low, high = (a, b) if utility_key(a) < utility_key(b) else (b, a)
            if low.exempt:
                continue
            gone.add(low.memory_id)
            ev = {
                "kept": high.memory_id,
                "similarity": _r(sim),
                "q_value": _r(low.q_value),
                "kept_q": _r(high.q_value),
            }
            actions.append(_dormant(low, "redundancy", ev))
    return actions


def _capacity(views: Mapping[str, MemoryView], config: LifecycleConfig) -> list[Action]:
    actions: list[Action] = []
    counted = [m for m in views.values() if m.live and m.category != "summary"]
    for namespace, members in _group(counted, lambda m: m.namespace):
        cap = config.capacity_of(namespace)
        if cap is None or len(members) <= cap:
            continue
        excess = len(members) - cap
        trimmable = sorted((m for m in members if not m.exempt), key=utility_key)
        for rank, m in enumerate(trimmable[:excess], start=1):
            ev = {
                "capacity": cap,
                "live": len(members),
                "utility_rank": rank,
                "q_value": _r(m.q_value),
            }
            actions.append(_dormant(m, "capacity", ev))
    return actions


def plan_forgetting(
    memories: Iterable[MemoryView],
    vectors: Vectors | None,
    at: datetime,
    config: LifecycleConfig = LifecycleConfig(),
) -> StepResult:
    views = {m.memory_id: m for m in memories}
    vecs = vectors or {}
    planned: list[Action] = []
    for rule in ("contradiction", "utility_floor", "redundancy", "capacity"):
        if rule == "contradiction":
            found = _contradictions(views)
        elif rule == "utility_floor":
            found = _utility_floor(views, at, config)
        elif rule == "redundancy":
            found = _redundancy(views, vecs, config)
        else:
            found = _capacity(views, config)
        planned.extend(found)
        for a in found:  # later rules see memories this one sent dormant
            views[a.memory_id] = replace(views[a.memory_id], tier="peripheral")
    return _cap(planned, config.max_actions_per_step)


# --- 5. consolidation ----------------------------------------------------------------


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
    config: LifecycleConfig = LifecycleConfig(),
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


# --- 6. summaries --------------------------------------------------------------------


def _sources(memories: Iterable[MemoryView]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for m in memories for t in m.source_turn_ids))


def summary_id(namespace: str, category: str, at: datetime) -> str:
    return derived_id(at, "category-summary", namespace, category, at.isoformat())


def plan_summaries(
    memories: Iterable[MemoryView], at: datetime, config: LifecycleConfig = LifecycleConfig()
) -> StepResult:
    ms = list(memories)
    summaries = [m for m in ms if m.category == "summary" and m.status == "active"]
    members = [m for m in ms if m.live and m.category != "summary" and m.created_at <= at]
    batches: list[list[Action]] = []
    for (namespace, category), group in _group(members, lambda m: (m.namespace, m.category)):
        if len(group) <= config.summary_threshold:
            continue
        newest = max(m.created_at for m in group)
        previous = [s for s in summaries if s.namespace == namespace and s.subject == category]
        if any(s.created_at >= newest for s in previous):
            continue  # debounce: a summary already covers the newest member
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


# --- 7. archival ---------------------------------------------------------------------


def plan_archival(
    memories: Iterable[MemoryView], at: datetime, config: LifecycleConfig = LifecycleConfig()
) -> StepResult:
    planned: list[Action] = []
    for m in sorted(memories, key=lambda m: m.memory_id):
        if (
            m.eligible
            and at - m.created_at > config.archive_after
            and m.importance < config.archive_importance_below
            and m.access_count <= config.archive_max_access
            and m.category not in config.archive_keep_categories
        ):
            ev = {
                "age_days": _r(_days(m.created_at, at)),
                "importance": _r(m.importance),
                "access_count": m.access_count,
                "category": m.category,
            }
            planned.append(Action("archival", "archive", m.memory_id, "fact_archival", ev))
    return _cap(planned, config.max_actions_per_step)


# --- the cycle -----------------------------------------------------------------------


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
    config: LifecycleConfig = LifecycleConfig(),
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
    config: LifecycleConfig = LifecycleConfig(),
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
