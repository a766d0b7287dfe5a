"""The dream cycle's vocabulary: its config, the memory views it plans on, the actions it plans."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from numpy.typing import NDArray

from memstream.core.memory_state import MemoryState
from memstream.core.replies import is_reply

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
    # spaced repetition: back to 0.8, each next rehearsal comes ~3x later than the last
    # (from 0.5 it came 1.45x later: the realistic stream's cycles wrote 2,298 rehearsals)
    rehearsal_target: float = 0.8
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
    # a summary is made again once its category grew by this share since the last one, or
    # after ``summary_refresh_after`` with any new member: not every daily cycle
    summary_refresh_growth: float = 0.2
    summary_refresh_after: timedelta = timedelta(days=30)
    # 7. archival
    archive_after: timedelta = timedelta(days=90)
    archive_importance_below: float = 0.3
    archive_max_access: int = 2
    # stability above this: consolidated (said again, captured by a strong memory that
    # followed it, rehearsed or co-retrieved), so not trivia however low its importance
    archive_max_stability: float = 1.0
    archive_keep_categories: frozenset[str] = frozenset(
        {"commitment", "preference", "decision", "principle", "correction", "summary"}
    )

    def capacity_of(self, namespace: str) -> int | None:
        for ns, cap in self.capacity:
            if ns == namespace:
                return cap
        return self.default_capacity


#: the defaults, shared as every step's default argument (the config is frozen)
DEFAULT_CONFIG = LifecycleConfig()


def trivia(
    importance: float, kind: str, subject: str | None, config: LifecycleConfig = DEFAULT_CONFIG
) -> bool:
    """Trivia the archival step may take: under ``archive_importance_below`` on the
    extractor's spectrum. Not an assistant's reply: its low importance only ranks it below
    what the user said (``core.replies``); it is the record of what was answered."""
    return importance < config.archive_importance_below and not is_reply(kind, subject)


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


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def _r(x: float) -> float:
    return round(x, 6)


def _latest(*times: datetime | None) -> datetime | None:
    known = [t for t in times if t is not None]
    return max(known) if known else None


def utility_key(m: MemoryView) -> tuple[float, float, int, datetime, str]:
    return (m.q_value, m.importance, m.access_count, m.created_at, m.memory_id)
