"""Synaptic tagging and capture: a weak memory survives if something important follows soon.

All rules run on one session's live tag set and on event time; the shell keeps one set
per session (memories without a session are never tagged) and turns the decision into
events.

Public API
----------
``TagConfig(ttl=4 h, weak_below=0.5, strong_min=0.7, capture_factor=1.3,
max_stability=100.0, flashbulb_arousal=0.8, flashbulb_importance=0.9)``
``Tag(memory_id, tagged_at, expires_at, importance, stability)``
``Arrival(memory_id, importance, arousal, stability=1.0)``: the memory just stored.
``on_memory(tags, memory, at, config, stability_of=None) -> TagDecision``
    1. tags with ``expires_at <= at`` are expired (``TagExpired``), never captured;
    2. ``arousal >= flashbulb_arousal``: flashbulb, the memory is pinned and its
       importance raised to at least ``flashbulb_importance`` (so it is strong);
    3. importance (after 2) ``>= strong_min``: every live tag is captured
       (``TagCaptured``: stability x ``capture_factor``, capped); ``stability_of`` gives
       current stabilities, else the one recorded on the tag;
    4. importance ``< weak_below``: a new tag until ``at + ttl`` (``SynapticTagged``),
       unless the memory already holds a live tag (a redelivered event).
    Captures are sorted by memory id; each tag is captured at most once.
``expire(tags, at) -> (live, expired)``
``is_live(tag, at)``: ``tagged_at <= at < expires_at``.
``tags_after(tags, decision) -> tuple[Tag, ...]``: the session's set after the decision.
``is_flashbulb(arousal, config)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any


@dataclass(frozen=True, slots=True)
class TagConfig:
    ttl: timedelta = timedelta(hours=4)
    weak_below: float = 0.5
    strong_min: float = 0.7
    capture_factor: float = 1.3
    max_stability: float = 100.0
    flashbulb_arousal: float = 0.8
    flashbulb_importance: float = 0.9


@dataclass(frozen=True, slots=True)
class Tag:
    memory_id: str
    tagged_at: datetime
    expires_at: datetime
    importance: float
    stability: float = 1.0


@dataclass(frozen=True, slots=True)
class Arrival:
    memory_id: str
    importance: float
    arousal: float = 0.0
    stability: float = 1.0


@dataclass(frozen=True, slots=True)
class Capture:
    memory_id: str
    captured_by: str
    stability_before: float
    stability_after: float
    tagged_at: datetime
    expires_at: datetime

    def evidence(self, at: datetime) -> dict[str, Any]:
        return {
            "rule": "tag_capture",
            "tagged_at": self.tagged_at.isoformat(),
            "expires_at": self.expires_at.isoformat(),
            "captured_at": at.isoformat(),
            "seconds_left": (self.expires_at - at).total_seconds(),
        }


@dataclass(frozen=True, slots=True)
class TagDecision:
    new_tag: Tag | None = None
    captures: tuple[Capture, ...] = ()
    expired: tuple[Tag, ...] = ()
    flashbulb: bool = False
    importance: float = 0.0  # the arriving memory's importance after the flashbulb rule
    pinned: bool = False
    evidence: dict[str, Any] = field(default_factory=dict)


def is_flashbulb(arousal: float, config: TagConfig = TagConfig()) -> bool:
    return arousal >= config.flashbulb_arousal


def is_live(tag: Tag, at: datetime) -> bool:
    return tag.tagged_at <= at < tag.expires_at


def _order(tag: Tag) -> tuple[str, datetime]:
    return (tag.memory_id, tag.tagged_at)


def expire(tags: Iterable[Tag], at: datetime) -> tuple[tuple[Tag, ...], tuple[Tag, ...]]:
    """(live, expired), each sorted by memory id. A tag from after ``at`` stays (not yet live)."""
    live: list[Tag] = []
    gone: list[Tag] = []
    for tag in tags:
        (gone if tag.expires_at <= at else live).append(tag)
    return tuple(sorted(live, key=_order)), tuple(sorted(gone, key=_order))


def _captured(stability: float, config: TagConfig) -> float:
    return min(stability * config.capture_factor, max(config.max_stability, stability))


def on_memory(
    tags: Iterable[Tag],
    memory: Arrival,
    at: datetime,
    config: TagConfig = TagConfig(),
    stability_of: Mapping[str, float] | None = None,
) -> TagDecision:
    remaining, expired = expire(tags, at)
    flashbulb = is_flashbulb(memory.arousal, config)
    importance = (
        max(memory.importance, config.flashbulb_importance) if flashbulb else memory.importance
    )
    captures: list[Capture] = []
    new_tag: Tag | None = None
    if importance >= config.strong_min:
        seen: set[str] = set()
        for tag in remaining:
            if not is_live(tag, at) or tag.memory_id in seen or tag.memory_id == memory.memory_id:
                continue
            seen.add(tag.memory_id)
            before = (stability_of or {}).get(tag.memory_id, tag.stability)
            captures.append(
                Capture(
                    tag.memory_id,
                    memory.memory_id,
                    before,
                    _captured(before, config),
                    tag.tagged_at,
                    tag.expires_at,
                )
            )
    elif importance < config.weak_below and not any(
        t.memory_id == memory.memory_id and is_live(t, at) for t in remaining
    ):
        new_tag = Tag(memory.memory_id, at, at + config.ttl, importance, memory.stability)
    evidence: dict[str, Any] = {
        "importance": importance,
        "arousal": memory.arousal,
        "live_tags": sum(1 for t in remaining if is_live(t, at)),
    }
    if flashbulb:
        evidence["flashbulb"] = {
            "arousal_min": config.flashbulb_arousal,
            "raised_from": memory.importance,
        }
    return TagDecision(
        new_tag=new_tag,
        captures=tuple(captures),
        expired=expired,
        flashbulb=flashbulb,
        importance=importance,
        pinned=flashbulb,
        evidence=evidence,
    )


def tags_after(tags: Iterable[Tag], decision: TagDecision) -> tuple[Tag, ...]:
    expired = set(decision.expired)
    captured = {c.memory_id for c in decision.captures}
    kept = [t for t in tags if t not in expired and t.memory_id not in captured]
    if decision.new_tag is not None:
        kept.append(decision.new_tag)
    return tuple(sorted(kept, key=_order))
