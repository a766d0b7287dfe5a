"""The memory-state reducer: the current state of a memory is a fold of its events.

``apply`` is pure and total over memory-log events. Events carry absolute after-values
(new Q, stability after, new text), so an immediately repeated event changes nothing.
Consumers still track the log positions they applied (a repeat after later events
must be skipped, not re-applied): that is what makes at-least-once delivery safe.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any, Literal

from memstream.core import relations, scoped_feedback
from memstream.core.metadata import encode as metadata_text
from memstream.core.metadata import updated as metadata_after
from memstream.schemas.envelope import Envelope
from memstream.schemas.events import (
    MemoryArchived,
    MemoryCreated,
    MemoryPinned,
    MemoryReinforced,
    MemoryRestored,
    MemorySuperseded,
    MemoryUpdated,
    QValueUpdated,
    RelationAdded,
    RelationRemoved,
    SynapticTagged,
    TagCaptured,
    TagExpired,
    TierChanged,
)

Status = Literal["active", "superseded", "archived"]

INITIAL_STABILITY = 1.0
INITIAL_Q = 0.5


@dataclass(frozen=True, slots=True)
class MemoryState:
    memory_id: str
    namespace: str
    session_id: str | None
    text: str
    category: str
    kind: str
    status: Status
    tier: str
    importance: float
    confidence: float
    arousal: float
    stability: float
    q_value: float
    entities: tuple[str, ...]
    valid_from: datetime | None
    valid_until: datetime | None
    content_hash: str
    source_turn_ids: tuple[str, ...]
    created_at: datetime
    updated_at: datetime
    pinned: bool = False
    immutable: bool = False
    subject: str | None = None
    slot: str | None = None
    superseded_by: str | None = None
    merged_into: str | None = None
    tagged_until: datetime | None = None
    reinforcements: int = 0
    last_q_update: datetime | None = None
    version: int = 1
    last_event_id: str = ""
    metadata: str = ""  # canonical JSON (core/metadata.py): URLs, commands, paths, versions, ids
    # typed edges to other memories, both directions ("causes>ID 0.800"; core/relations.py)
    relations: tuple[str, ...] = ()
    # the questions negative feedback said it did not help with (core/scoped_feedback.py)
    unhelpful_for: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return self.status == "active"

    @property
    def holds_until(self) -> datetime | None:
        """When the memory stops being true: its ``valid_until``, except a task's, where it
        is the due date (overdue and not reported done, it is still to do)."""
        return None if self.category == "commitment" else self.valid_until

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # by position, without the constructor: a partition snapshot (streams/snapshots.py)
        # unpickles a million states, and the generated __init__ (~7 us a state) costs
        # more than setting the slots directly (~4.4 us); both far below the generic
        # dataclass route
        return (_rebuilt, (tuple(getattr(self, name) for name in _FIELD_NAMES),))


_FIELD_NAMES = tuple(f.name for f in fields(MemoryState))
_SLOT_SETTERS = tuple(MemoryState.__dict__[name].__set__ for name in _FIELD_NAMES)


def _rebuilt(values: tuple[Any, ...]) -> MemoryState:
    """A state from its fields by position, as ``__reduce__`` pickles it: the slots are set
    directly (frozen only guards ``__setattr__``); the state was built by the reducer."""
    state: MemoryState = object.__new__(MemoryState)
    for set_slot, value in zip(_SLOT_SETTERS, values, strict=True):
        set_slot(state, value)
    return state


def _merge_ids(old: tuple[str, ...], new: list[str]) -> tuple[str, ...]:
    return old + tuple(i for i in new if i not in old)


def _shared(value: str | None) -> str | None:
    """One copy of a string many memories hold (every decoded event brings its own): a
    partition's state keeps a million memories in well under a GiB."""
    return None if value is None else sys.intern(value)


def created(env: Envelope[MemoryCreated]) -> MemoryState:
    p = env.payload
    return MemoryState(
        memory_id=p.memory_id,
        namespace=sys.intern(env.namespace),
        session_id=_shared(env.session_id),
        text=p.text,
        category=sys.intern(p.category),
        kind=sys.intern(p.kind),
        status="active",
        tier=sys.intern(p.tier),
        importance=p.importance,
        confidence=p.confidence,
        arousal=p.arousal,
        stability=INITIAL_STABILITY,
        q_value=INITIAL_Q,
        entities=tuple(p.entities),
        valid_from=p.valid_from,
        valid_until=p.valid_until,
        content_hash=p.content_hash,
        source_turn_ids=tuple(p.source_turn_ids),
        created_at=env.occurred_at,
        updated_at=env.occurred_at,
        metadata=metadata_text(p.metadata),
        pinned=p.pinned,
        subject=_shared(p.subject),
        slot=_shared(p.slot),
        last_event_id=env.event_id,
    )


def apply(state: MemoryState | None, env: Envelope[Any]) -> MemoryState | None:
    """The state after ``env``; events about a memory not (yet) known leave it unknown."""
    p = env.payload
    if isinstance(p, MemoryCreated):
        if state is not None and state.last_event_id == env.event_id:
            return state
        return created(env)
    if state is None:
        return None
    at = env.occurred_at
    changes: dict[str, Any]
    if isinstance(p, MemoryUpdated):
        # a user's edit replaces the text wholesale, so its entities replace the old ones;
        # an update from extraction adds to what the memory already said
        replaced = p.evidence.get("decision") == "user_edit"
        changes = dict(
            text=p.text,
            content_hash=p.content_hash,
            entities=tuple(p.entities) if replaced else _merge_ids(state.entities, p.entities),
            source_turn_ids=_merge_ids(state.source_turn_ids, p.source_turn_ids),
            metadata=metadata_after(state.metadata, p.text, p.metadata, replaced),
        )
    elif isinstance(p, MemoryReinforced):
        changes = dict(
            stability=p.stability_after,
            source_turn_ids=_merge_ids(state.source_turn_ids, p.source_turn_ids),
            reinforcements=state.reinforcements + (0 if state.last_event_id == env.event_id else 1),
        )
    elif isinstance(p, MemorySuperseded):
        changes = dict(
            status="superseded", valid_until=p.valid_until, superseded_by=p.superseded_by
        )
    elif isinstance(p, QValueUpdated):
        changes = dict(q_value=p.new_q, last_q_update=at)
        key = p.evidence.get(scoped_feedback.EVIDENCE_KEY)
        if isinstance(key, str) and key:
            changes["unhelpful_for"] = scoped_feedback.after_feedback(
                state.unhelpful_for, key, p.reward
            )
    elif isinstance(p, SynapticTagged):
        changes = dict(tagged_until=p.expires_at)
    elif isinstance(p, TagCaptured):
        changes = dict(stability=p.stability_after, tagged_until=None)
    elif isinstance(p, TagExpired):
        changes = dict(tagged_until=None)
    elif isinstance(p, TierChanged):
        changes = dict(tier=sys.intern(p.to_tier))
    elif isinstance(p, MemoryArchived):
        changes = dict(status="archived", merged_into=p.merged_into)
    elif isinstance(p, MemoryRestored):
        changes = dict(status="active", merged_into=None)
    elif isinstance(p, MemoryPinned):
        changes = dict(pinned=p.pinned, immutable=p.immutable)
    elif isinstance(p, RelationAdded | RelationRemoved):
        confidence = p.confidence if isinstance(p, RelationAdded) else None
        changes = dict(
            relations=relations.updated(
                state.relations, state.memory_id, p.memory_id, p.target_id, p.relation, confidence
            ),
        )
    else:  # DuplicateSkipped, TurnsExtracted: records of decisions that change no memory
        return state
    # one copy per event: the change and the bookkeeping together (replace is costly)
    if state.last_event_id == env.event_id:
        return replace(state, **changes)
    return replace(
        state,
        **changes,
        updated_at=max(state.updated_at, at),
        version=state.version + 1,
        last_event_id=env.event_id,
    )


def memory_id_of(env: Envelope[Any]) -> str | None:
    return getattr(env.payload, "memory_id", None)


def memory_ids_of(env: Envelope[Any]) -> tuple[str, ...]:
    """The memories an event changes: its ``memory_id``, and an edge's target too."""
    mid = getattr(env.payload, "memory_id", None)
    if mid is None:
        return ()
    p = env.payload
    if isinstance(p, RelationAdded | RelationRemoved) and p.target_id != mid:
        return (mid, p.target_id)
    return (mid,)


def fold(events: list[Envelope[Any]]) -> dict[str, MemoryState]:
    """All memories after ``events`` (in log order)."""
    states: dict[str, MemoryState] = {}
    for env in events:
        for mid in memory_ids_of(env):
            new = apply(states.get(mid), env)
            if new is not None:
                states[mid] = new
    return states


_TIME_FIELDS = (
    "valid_from",
    "valid_until",
    "created_at",
    "updated_at",
    "tagged_until",
    "last_q_update",
)


def to_json(state: MemoryState) -> dict[str, Any]:
    """A JSON-ready dict (datetimes as ISO strings, tuples as lists)."""
    out: dict[str, Any] = {}
    for name in state.__dataclass_fields__:
        value = getattr(state, name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, tuple):
            value = list(value)
        out[name] = value
    return out


def from_json(data: dict[str, Any]) -> MemoryState:
    values = dict(data)
    for name in _TIME_FIELDS:
        if values.get(name) is not None:
            values[name] = datetime.fromisoformat(values[name])
    values["entities"] = tuple(values.get("entities") or ())
    values["source_turn_ids"] = tuple(values.get("source_turn_ids") or ())
    values["relations"] = tuple(values.get("relations") or ())
    values["unhelpful_for"] = tuple(values.get("unhelpful_for") or ())
    return MemoryState(**values)
