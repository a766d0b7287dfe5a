"""Memory tiers: core / working / peripheral, and the rules that move a memory between them.

Mapping to the episodic / semantic / dormant scheme:

* ``working``    ~ episodic: new memories land here, tied to when they were learned;
* ``core``       ~ semantic: proven knowledge (used often, consistently useful, or one of
  several memories about the same entity), favoured by recall;
* ``peripheral`` ~ dormant: kept and restorable, but out of the way (the lifecycle's
  strategic forgetting sends memories here too).

Public API
----------
``TierConfig(access_min=5, access_window=14 d, q_core=0.7, q_sustain=7 d, entity_min=3,
idle_after=60 d, idle_q_below=0.4, fade_below=0.1, keep_importance=0.6)``
``TierView``: what the rules read (build it from MemoryState plus usage stats, and its
retention from ``core.lifecycle.retention``).
``tier_change(memory, at, config) -> (to_tier, rule, evidence) | None``
    Exempt (``None``): not active, pinned, immutable or flashbulb. Then:
    1. demotion, one step down (core -> working -> peripheral), after no access for
       ``idle_after``: rule ``idle_low_q`` when Q < ``idle_q_below`` (feedback found it
       useless), else ``faded`` when its retention (on its tier's forgetting clock) is
       under ``fade_below``, no feedback found it useful (Q <= 0.5) and its importance
       is under ``keep_importance``: a memory nobody used fades by time alone (a
       never-rated one sits at Q 0.5 and would otherwise never leave). The important
       and the useful are the ones the dream cycle rehearses (``core.lifecycle``, same
       thresholds): they stay. A memory meeting either condition is never promoted (no
       promote/demote oscillation);
    2. promotion, one step up (peripheral -> working -> core), first rule that holds:
       ``access_frequency`` (>= ``access_min`` accesses within ``access_window``),
       ``sustained_q`` (Q >= ``q_core`` continuously since ``q_high_since``, at least
       ``q_sustain`` ago), ``shared_entity`` (>= ``entity_min`` active memories, this
       one included, share one of its entities; working -> core only: a peripheral
       memory comes back by use, so structure never undoes a forgetting decision — the
       lifecycle sends a contradicted or useless memory dormant while its entity's other
       memories are still there).
    One step per call: the next evaluation may take the next, with its own event.
``entity_group_sizes(memories) -> dict[id, int]``: the ``entity_group`` field for every
memory, from (memory id, entities) of the active memories of one namespace.
``q_high_since(previous, q, at, config) -> datetime | None``: keeps ``q_high_since``
current as Q values arrive (set when Q first reaches ``q_core``, cleared below it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from memstream.core.qlearning import NEUTRAL_Q

Tier = Literal["core", "working", "peripheral"]
ORDER: tuple[Tier, ...] = ("peripheral", "working", "core")
SCHEME: dict[str, str] = {"working": "episodic", "core": "semantic", "peripheral": "dormant"}


@dataclass(frozen=True, slots=True)
class TierConfig:
    access_min: int = 5
    access_window: timedelta = timedelta(days=14)
    q_core: float = 0.7
    q_sustain: timedelta = timedelta(days=7)
    entity_min: int = 3
    idle_after: timedelta = timedelta(days=60)
    idle_q_below: float = 0.4
    fade_below: float = 0.1  # retention under which an idle, never-useful memory has faded
    keep_importance: float = 0.6  # from here up a memory never fades (rehearsed instead)


@dataclass(frozen=True, slots=True)
class TierView:
    memory_id: str
    tier: str
    q_value: float
    created_at: datetime
    last_access: datetime | None = None
    access_times: tuple[datetime, ...] = ()  # recent accesses; the last few dozen suffice
    q_high_since: datetime | None = None  # when Q reached q_core and has stayed there since
    entity_group: int = 1  # largest number of active memories sharing one of its entities
    active: bool = True
    pinned: bool = False
    immutable: bool = False
    flashbulb: bool = False
    retention: float | None = None  # on its tier's clock at ``at``; None: the fade rule is off
    importance: float = 0.5


TierDecision = tuple[Tier, str, dict[str, Any]]


def _step(tier: str, by: int) -> Tier | None:
    if tier not in ORDER:
        return None
    i = ORDER.index(tier) + by
    return ORDER[i] if 0 <= i < len(ORDER) else None


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def is_exempt(memory: TierView) -> bool:
    return not memory.active or memory.pinned or memory.immutable or memory.flashbulb


def _demotion(memory: TierView, idle: timedelta, config: TierConfig) -> str | None:
    """The demotion rule that holds, if any (module doc, rule 1)."""
    if idle < config.idle_after:
        return None
    if memory.q_value < config.idle_q_below:
        return "idle_low_q"
    if (
        memory.retention is not None
        and memory.retention < config.fade_below
        and memory.q_value <= NEUTRAL_Q
        and memory.importance < config.keep_importance
    ):
        return "faded"
    return None


def tier_change(
    memory: TierView, at: datetime, config: TierConfig = TierConfig()
) -> TierDecision | None:
    if is_exempt(memory):
        return None
    since = memory.last_access or memory.created_at
    idle = at - since
    rule = _demotion(memory, idle, config)
    if rule is not None:
        down = _step(memory.tier, -1)
        if down is None:
            return None
        evidence: dict[str, Any] = {
            "from_tier": memory.tier,
            "idle_days": round(idle.total_seconds() / 86_400, 3),
            "last_access": _iso(memory.last_access),
            "q_value": memory.q_value,
        }
        if rule == "faded":
            evidence["retention"] = round(memory.retention or 0.0, 6)
            evidence["fade_below"] = config.fade_below
            evidence["importance"] = round(memory.importance, 6)
        return (down, rule, evidence)
    up = _step(memory.tier, +1)
    if up is None:
        return None
    recent = sorted(t for t in set(memory.access_times) if at - config.access_window <= t <= at)
    if len(recent) >= config.access_min:
        return (
            up,
            "access_frequency",
            {
                "from_tier": memory.tier,
                "accesses_in_window": len(recent),
                "window_days": config.access_window.days,
                "first_in_window": recent[0].isoformat(),
            },
        )
    if (
        memory.q_value >= config.q_core
        and memory.q_high_since is not None
        and at - memory.q_high_since >= config.q_sustain
    ):
        return (
            up,
            "sustained_q",
            {
                "from_tier": memory.tier,
                "q_value": memory.q_value,
                "q_high_since": memory.q_high_since.isoformat(),
                "sustained_days": round((at - memory.q_high_since).total_seconds() / 86_400, 3),
            },
        )
    if memory.entity_group >= config.entity_min and memory.tier != "peripheral":
        return (
            up,
            "shared_entity",
            {"from_tier": memory.tier, "memories_sharing_entity": memory.entity_group},
        )
    return None


def topical_entities(entities: Iterable[str], subject: str | None) -> list[str]:
    """The entities a memory is about, less its subject: every memory of a user names the
    user, and "3+ memories share an entity" must not promote a whole namespace for that."""
    own = (subject or "").casefold()
    return [e for e in entities if e and e.casefold() != own]


def entity_group_sizes(memories: Iterable[tuple[str, Iterable[str]]]) -> dict[str, int]:
    holders: dict[str, set[str]] = {}
    entities_of: dict[str, set[str]] = {}
    for mid, entities in memories:
        ents = {e.casefold() for e in entities if e}
        entities_of[mid] = ents
        for e in ents:
            holders.setdefault(e, set()).add(mid)
    return {
        mid: max((len(holders[e]) for e in ents), default=1) for mid, ents in entities_of.items()
    }


def q_high_since(
    previous: datetime | None, q: float, at: datetime, config: TierConfig = TierConfig()
) -> datetime | None:
    if q < config.q_core:
        return None
    return previous if previous is not None and previous <= at else at
