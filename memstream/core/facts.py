"""The extractor's vocabulary: what goes in (a view of a conversation turn) and what
comes out (an atomic, standalone fact). Both are plain frozen values so the rule
extractor stays pure and LLM output can be validated into the same shape."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import get_args

from memstream.schemas.events import Category, Kind, Role

CATEGORIES: frozenset[str] = frozenset(get_args(Category))
KINDS: frozenset[str] = frozenset(get_args(Kind))
#: Relations an extractor may declare between two of its facts (besides ``caused_by``): the
#: others change a memory's status (supersedes) or come from the rules (same_entity)
DECLARED_RELATIONS: tuple[str, ...] = ("elaborates", "contradicts", "related_to")
#: Categories an extractor may emit; "summary" belongs to consolidation, not extraction.
EXTRACTABLE_CATEGORIES: tuple[str, ...] = tuple(c for c in get_args(Category) if c != "summary")


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnView:
    """The parts of a ConversationTurn an extractor needs, with its event time."""

    turn_id: str
    role: Role
    speaker: str
    text: str
    occurred_at: datetime
    session_id: str | None = None
    image_caption: str | None = None  # what a photo shared with the turn shows


def _unit(name: str, value: float) -> None:
    # bool is an int subclass; a JSON `true` must not pass as confidence 1.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number, got {type(value).__name__}")
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    """One atomic third-person claim, e.g. "Caroline moved to Boston".

    ``subject``/``slot`` (e.g. "user"/"employer") let a later gate see that a new
    fact answers the same question as an old one and may supersede it.
    """

    category: Category
    text: str
    confidence: float
    entities: tuple[str, ...] = ()
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    kind: Kind = "note"
    source_turn_ids: tuple[str, ...] = ()
    subject: str | None = None
    slot: str | None = None
    importance: float = 0.5
    #: items the subject no longer prefers or uses ("prefers Rust over Go now": "go"): the
    #: write plan supersedes the subject's memories that prefer or use them
    replaces: tuple[str, ...] = ()
    #: head nouns of plans the subject called off ("my marathon is cancelled": "marathon"):
    #: the write plan supersedes the subject's plans that name them
    cancels: tuple[str, ...] = ()
    #: likewise for plans moved to another time ("the dentist appointment was moved to
    #: Friday": "appointment"): the new date supersedes the old plan
    moves: tuple[str, ...] = ()
    #: the text of another fact of the same extraction that caused this one (a model says
    #: so, ``caused_by``): the write plan links the two memories with a ``causes`` edge
    cause: str | None = None
    #: the turn id of the user's request an assistant reply answers (core/replies.py): the
    #: write plan links the reply to that turn's memories with ``related_to`` edges
    reply_to: str | None = None
    #: (relation, the text of another fact of the same extraction) a model declared between
    #: them, this fact the source (``related``): ``elaborates``, ``contradicts``, ``related_to``
    links: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"unknown category {self.category!r}")
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind {self.kind!r}")
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError("fact text must be a non-empty string")
        if not isinstance(self.links, tuple) or not all(
            isinstance(link, tuple) and len(link) == 2 and link[0] in DECLARED_RELATIONS
            for link in self.links
        ):
            raise ValueError(
                f"links must be (relation, fact text) pairs, relation one of {DECLARED_RELATIONS}"
            )
        _unit("confidence", self.confidence)
        _unit("importance", self.importance)
        if not isinstance(self.entities, tuple) or not all(
            isinstance(e, str) for e in self.entities
        ):
            raise ValueError("entities must be a tuple of strings")
        if not isinstance(self.source_turn_ids, tuple) or not all(
            isinstance(t, str) and t for t in self.source_turn_ids
        ):
            raise ValueError("source_turn_ids must be a tuple of non-empty strings")
        for name, when in (("valid_from", self.valid_from), ("valid_until", self.valid_until)):
            if when is not None and not isinstance(when, datetime):
                raise ValueError(f"{name} must be a datetime or None")
        if (
            self.valid_from is not None
            and self.valid_until is not None
            and (self.valid_from.tzinfo is None) == (self.valid_until.tzinfo is None)
            and self.valid_until < self.valid_from
        ):
            raise ValueError("valid_until precedes valid_from")
