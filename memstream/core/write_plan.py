"""Turning one flushed session buffer into memory-log events.

``plan_flush`` is deterministic: the same buffer, extraction result and namespace state
give the same events with the same ids (ids derive from what caused them, times are
event times). It advances the ``NamespaceMemory`` it is given as it decides, so a fact
later in the batch sees the ones before it; the events it returns are exactly what a
fold of the log will apply, so replaying the log rebuilds the same index.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from memstream.core import metadata
from memstream.core.extract.images import QUIET_FILTERS, with_caption
from memstream.core.extract.slots import prefers_item
from memstream.core.facts import Fact, TurnView
from memstream.core.gate import GateConfig, GateDecision, decide, reinforced_stability
from memstream.core.hashing import content_hash
from memstream.core.merge import merge_texts, says_more
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.relation_plan import declared_cause, declared_relation, plan_relations
from memstream.core.relations import Proposal, RelationConfig
from memstream.core.replies import (
    REPLY_CONFIDENCE,
    REPLY_LINKS,
    REPLY_RELATION,
    REPLY_RULE,
    is_reply,
)
from memstream.core.shorten import cut_at_word
from memstream.core.signals import SignalRecord
from memstream.core.tagging import Arrival, Tag, TagConfig, is_flashbulb, on_memory
from memstream.schemas.envelope import DEFAULT_LIMITS, Envelope, Limits, make_event
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import (
    DuplicateSkipped,
    Extraction,
    MemoryCreated,
    MemoryReinforced,
    MemorySuperseded,
    MemoryUpdated,
    Role,
    SynapticTagged,
    TagCaptured,
    TagExpired,
    TurnsExtracted,
    TurnSignal,
)
from memstream.schemas.ids import derived_id

SCANNER_VERSION = "signals-v1"
DEFAULT_RELATIONS = RelationConfig()
#: Characters of the source turns a new or updated memory carries in its evidence
#: (``source_text``), for the lexical index: a memory is a sentence cut from a turn, and a
#: question often uses the turn's other words ("what profession do I work in" against
#: "User is trying to decide where to start with probability", said by a teacher).
SOURCE_TEXT_CHARS = 2000


@dataclass(frozen=True, slots=True)
class BufferedTurn:
    event_id: str
    turn_id: str
    role: Role
    speaker: str
    text: str
    occurred_at: datetime
    signal: SignalRecord
    image: str | None = None  # the caption of a photo the turn shares (core/extract/images.py)
    meta: dict[str, Any] | None = None  # the producer's metadata of the turn, carried onto memories

    @property
    def skipped(self) -> bool:
        # "Look!" with a photo says something: the photo
        return self.signal.level == "SKIP" and not (
            self.image and set(self.signal.filters) <= QUIET_FILTERS
        )

    def view(self, session_id: str | None) -> TurnView:
        """What an extractor reads of this turn."""
        return TurnView(
            turn_id=self.turn_id,
            role=self.role,
            speaker=self.speaker,
            text=self.text,
            occurred_at=self.occurred_at,
            session_id=session_id,
            image_caption=self.image,
        )


@dataclass(frozen=True, slots=True)
class Flush:
    namespace: str
    session_id: str | None
    trigger: str
    turns: tuple[BufferedTurn, ...]
    facts: tuple[Fact, ...]
    extraction: Extraction | None
    fact_extractions: tuple[Extraction, ...] = ()  # per fact, when it differs (fallback)
    llm_calls: int = 0
    cost_usd: float = 0.0
    producer: str = "write-path"


def _turn_signal(t: BufferedTurn) -> TurnSignal:
    return TurnSignal(
        turn_id=t.turn_id,
        event_id=t.event_id,
        level=t.signal.level.value,  # type: ignore[arg-type]
        reasons=list(t.signal.reasons),
        importance=round(t.signal.importance.combined, 6),
    )


def plan_flush(
    memory: NamespaceMemory,
    flush: Flush,
    gate: GateConfig,
    limits: Limits = DEFAULT_LIMITS,
    recorded_at: datetime | None = None,
    relations: RelationConfig = DEFAULT_RELATIONS,
) -> list[Envelope[Any]]:
    """``recorded_at`` is the shell's wall clock; left out, event time stands in (pure runs)."""
    at = max(t.occurred_at for t in flush.turns)
    recorded = recorded_at or at
    head = make_event(
        TurnsExtracted(
            trigger=flush.trigger,  # type: ignore[arg-type]
            turns=[_turn_signal(t) for t in flush.turns],
            extraction=flush.extraction,
            llm_calls=flush.llm_calls,
            cost_usd=flush.cost_usd,
            facts=len(flush.facts),
            evidence={"scanner": SCANNER_VERSION},
        ),
        namespace=flush.namespace,
        session_id=flush.session_id,
        occurred_at=at,
        causation_id=flush.turns[-1].event_id,
        producer=flush.producer,
        event_id=derived_id(at, "extracted", flush.namespace, *(t.event_id for t in flush.turns)),
        recorded_at=recorded,
        limits=limits,
    )
    events: list[Envelope[Any]] = [head]
    by_turn = {t.turn_id: t for t in flush.turns}
    rejected: list[dict[str, str]] = []
    last_by_turn: dict[str, str] = {}  # turn id -> the memory created from it last
    landed_by_text: dict[str, str] = {}  # a fact's text -> the memory it was stored in
    landed_by_turn: dict[str, list[str]] = {}  # turn id -> memories its facts were stored in
    waiting: dict[str, list[str]] = {}  # a cause's text -> effects stored before it
    linking: dict[str, list[tuple[str, str]]] = {}  # a fact's text -> (source, relation) before it
    for i, fact in enumerate(flush.facts):
        extraction = (
            flush.fact_extractions[i] if i < len(flush.fact_extractions) else flush.extraction
        )
        try:
            planned = _plan_fact(
                memory, fact, i, head, by_turn, extraction, gate, flush.producer, limits, recorded
            )
        except EventValidationError as e:  # e.g. a model's fact too long for the log
            rejected.append({"fact": fact.text[:200], "error": str(e)})
            continue
        for env in planned:
            memory.apply(env)
        previous = next(
            (last_by_turn[t] for t in reversed(fact.source_turn_ids) if t in last_by_turn), None
        )
        landed = _landed_in(planned)
        declared = []  # causes its extractor declared, in either order of the two facts
        if landed is not None:
            cause = landed_by_text.get(fact.cause) if fact.cause else None
            if fact.cause and cause is None:
                waiting.setdefault(fact.cause, []).append(landed)
            elif cause is not None and cause != landed:
                declared.append(declared_cause(cause, landed, extraction))
            for effect in waiting.pop(fact.text, []):
                if effect != landed:
                    declared.append(declared_cause(landed, effect, extraction))
            for relation, other in fact.links:
                target = landed_by_text.get(other)
                if target is None:
                    linking.setdefault(other, []).append((landed, relation))
                elif target != landed:
                    declared.append(declared_relation(landed, target, relation, extraction))
            for source, relation in linking.pop(fact.text, []):
                if source != landed:
                    declared.append(declared_relation(source, landed, relation, extraction))
            if is_reply(fact.kind, fact.subject):
                declared.extend(
                    reply_links(memory, landed, fact, flush.session_id, landed_by_turn, by_turn)
                )
            for t in fact.source_turn_ids:
                if landed not in landed_by_turn.setdefault(t, []):
                    landed_by_turn[t].append(landed)
        edges = plan_relations(
            memory, planned, previous, relations, flush.producer, recorded, limits, declared
        )
        if landed is not None:
            landed_by_text[fact.text] = landed
        for env in planned:
            if isinstance(env.payload, MemoryCreated):
                last_by_turn.update(
                    dict.fromkeys(env.payload.source_turn_ids, env.payload.memory_id)
                )
        events.extend(planned)
        events.extend(edges)
    if rejected:
        # Not silently dropped: the extraction record says which facts could not be stored.
        evidence = dict(head.payload.evidence, rejected_facts=rejected)
        events[0] = make_event(
            TurnsExtracted(**{**_fields(head.payload), "evidence": evidence}),
            namespace=head.namespace,
            session_id=head.session_id,
            occurred_at=head.occurred_at,
            causation_id=head.causation_id,
            producer=head.producer,
            event_id=head.event_id,
            recorded_at=recorded,
            limits=limits,
        )
    return events


def source_text(sources: Sequence[BufferedTurn], limit: int = SOURCE_TEXT_CHARS) -> str:
    """The words of the turns a fact was extracted from, joined, at most ``limit`` characters
    (cut at a word boundary)."""
    return cut_at_word(
        " ".join(" ".join(with_caption(t.text, t.image).split()) for t in sources), limit
    )


def _fields(payload: TurnsExtracted) -> dict[str, Any]:
    # dataclasses.fields, not __dataclass_fields__: that one also lists the ClassVar TYPE,
    # which the constructor refuses (every flush with a rejected fact raised)
    return {f.name: getattr(payload, f.name) for f in fields(payload)}


def _plan_fact(
    memory: NamespaceMemory,
    fact: Fact,
    index: int,
    head: Envelope[TurnsExtracted],
    by_turn: dict[str, BufferedTurn],
    extraction: Extraction | None,
    gate: GateConfig,
    producer: str,
    limits: Limits,
    recorded_at: datetime,
) -> list[Envelope[Any]]:
    ns = memory.namespace
    sources = [by_turn[t] for t in fact.source_turn_ids if t in by_turn]
    at = max((t.occurred_at for t in sources), default=head.occurred_at)
    turn_ids = list(fact.source_turn_ids)
    turn_event_ids = [t.event_id for t in sources]
    chash = content_hash(ns, fact.text)

    def event(payload: Any, tag: str) -> Envelope[Any]:
        return make_event(
            payload,
            namespace=ns,
            session_id=head.session_id,
            occurred_at=at,
            causation_id=head.event_id,
            producer=producer,
            event_id=derived_id(at, "memory-event", head.event_id, str(index), tag),
            recorded_at=recorded_at,
            limits=limits,
        )

    existing = memory.active_hash(chash)
    if existing is not None:
        return [
            event(
                DuplicateSkipped(
                    memory_id=existing,
                    content_hash=chash,
                    text=fact.text,
                    source_turn_ids=turn_ids,
                    evidence={
                        "decision": "skip-duplicate",
                        "reason": "same normalized content hash",
                    },
                ),
                "duplicate",
            )
        ]

    if extraction is not None and extraction.extractor == "episodes":
        # what was said, kept as said: no similarity gate (core/episodes.py). Not every fact
        # of kind "episode": a dated claim ("I moved to Porto last month") still meets the
        # gate, so it can supersede what it changes.
        decision = GateDecision("create", None, 0.0, "an episode: a turn no fact covers")
    else:
        vector = memory.embed(fact.text)
        holder = memory.slot_holder(fact.subject, fact.slot, vector)
        refines = holder is not None and says_more(fact.text, holder.text)
        decision = decide(memory.closest(vector), holder, gate, refines_slot=refines)
    given_up = _given_up(memory, fact)
    called_off = [m for m in _plans_naming(memory, fact, at, fact.cancels) if m not in given_up]
    moved = [
        m for m in _plans_naming(memory, fact, at, fact.moves) if m not in (*given_up, *called_off)
    ]
    if decision.target_id in (*given_up, *called_off, *moved) and decision.action in (
        "update",
        "reinforce",
    ):
        # "prefers Rust over Go now" is close in words to "prefers Go", and ends it
        decision = GateDecision(
            "create", None, decision.similarity, f"{decision.reason}; the match is given up"
        )
    target = memory.states.get(decision.target_id) if decision.target_id else None
    if decision.action in ("update", "supersede") and target is not None and target.immutable:
        # a locked memory is never changed by extraction: the new fact stands beside it
        decision = GateDecision(
            "create", None, decision.similarity, f"{decision.reason}; the match is locked"
        )
    evidence = decision.evidence()

    def ends(by: str) -> list[Envelope[Any]]:
        """The memories this fact says were given up, called off or moved, superseded by ``by``."""
        spared = (by, decision.target_id if decision.action == "supersede" else None)
        kinds = (
            (
                given_up,
                "given_up",
                "the subject no longer prefers or uses it",
                "given_up",
                fact.replaces,
            ),
            (called_off, "cancelled", "the plan was called off", "cancelled", fact.cancels),
            (moved, "rescheduled", "the plan was moved to another time", "moved", fact.moves),
        )
        return [
            event(
                MemorySuperseded(
                    memory_id=mid,
                    superseded_by=by,
                    valid_until=fact.valid_from or at,
                    reason=reason,
                    evidence={
                        "decision": "supersede",
                        "reason": because,
                        "subject": fact.subject,
                        named: list(items),
                        "old_text": memory.states[mid].text,
                        "new_text": fact.text,
                    },
                ),
                f"{reason.replace('_', '-')}:{mid}",
            )
            for ids, reason, because, named, items in kinds
            for mid in ids
            if mid not in spared
        ]

    if decision.action == "reinforce" and decision.target_id is not None:
        before = memory.states[decision.target_id].stability
        return [
            event(
                MemoryReinforced(
                    memory_id=decision.target_id,
                    stability_before=before,
                    stability_after=reinforced_stability(before, gate),
                    reason="gate",
                    source_turn_ids=turn_ids,
                    evidence={**evidence, "text": fact.text},
                ),
                "reinforce",
            ),
            *ends(decision.target_id),
        ]
    if decision.action == "update" and decision.target_id is not None:
        old = memory.states[decision.target_id]
        merged = merge_texts(old.text, fact.text)
        return [
            event(
                MemoryUpdated(
                    memory_id=old.memory_id,
                    text=merged,
                    previous_text=old.text,
                    content_hash=content_hash(ns, merged),
                    entities=list(fact.entities),
                    source_turn_ids=turn_ids,
                    metadata=_metadata(fact, sources),
                    evidence={
                        **evidence,
                        "new_text": fact.text,
                        "source_text": source_text(sources),
                    },
                ),
                "update",
            ),
            *ends(old.memory_id),
        ]

    memory_id = derived_id(at, "memory", ns, chash, head.event_id)
    flashbulb_rule = is_flashbulb(max([0.0, *(t.signal.emotion.arousal for t in sources)]))
    # the extractor's importance is the claim's own (core.importance): the turn's combined
    # signal would lift small talk said beside an important fact to that fact's level
    importance = fact.importance
    arousal = max([0.0, *(t.signal.emotion.arousal for t in sources)])
    created = event(
        MemoryCreated(
            memory_id=memory_id,
            text=fact.text,
            category=fact.category,
            kind=fact.kind,
            confidence=fact.confidence,
            importance=round(min(max(importance, 0.9) if flashbulb_rule else importance, 1.0), 6),
            arousal=round(min(arousal, 1.0), 6),
            entities=list(fact.entities),
            valid_from=fact.valid_from,
            valid_until=fact.valid_until,
            content_hash=chash,
            source_turn_ids=turn_ids,
            source_event_ids=turn_event_ids,
            extraction=extraction,
            subject=fact.subject,
            slot=fact.slot,
            pinned=flashbulb_rule,
            metadata=(found := _metadata(fact, sources)),
            evidence={
                **evidence,
                "signals": {t.turn_id: list(t.signal.reasons) for t in sources},
                "source_text": source_text(sources),
                **(
                    {"incomplete": "a procedure without its command or next step"}
                    if metadata.lacking_step(fact.text, found)
                    else {}
                ),
            },
        ),
        "create",
    )
    tags = _plan_tags(memory, created, event)
    if decision.action != "supersede" or decision.target_id is None:
        return [created, *tags, *ends(memory_id)]
    return [
        created,
        *tags,
        *ends(memory_id),
        event(
            MemorySuperseded(
                memory_id=decision.target_id,
                superseded_by=memory_id,
                valid_until=fact.valid_from or at,
                reason="contradiction",
                evidence={
                    **evidence,
                    "subject": fact.subject,
                    "slot": fact.slot,
                    "new_text": fact.text,
                },
            ),
            "supersede",
        ),
    ]


def reply_links(
    memory: NamespaceMemory,
    reply: str,
    fact: Fact,
    session_id: str | None,
    landed_by_turn: dict[str, list[str]],
    in_flush: Collection[str] = (),
) -> list[Proposal]:
    """A reply's edges to the memories of the request it answers (core/replies.py): the
    user's turn before it in this flush, or, when the flush opened with the reply, the
    session's latest turn that yielded memories (its request was flushed before; a turn of
    ``in_flush`` came after the reply)."""
    if fact.reply_to is not None:
        turn, targets = fact.reply_to, landed_by_turn.get(fact.reply_to, [])
    elif session_id is not None and session_id in memory.session_tail:
        turn, targets = memory.session_tail[session_id]
        if turn in in_flush:
            return []
    else:
        return []
    return [
        Proposal(reply, m, REPLY_RELATION, REPLY_CONFIDENCE, REPLY_RULE, {"request_turn": turn})
        for m in targets[:REPLY_LINKS]
        if m != reply and m in memory.states
    ]


def _landed_in(planned: Sequence[Envelope[Any]]) -> str | None:
    """The memory a fact's decisions stored it in: created, updated, reinforced, or the
    existing duplicate."""
    for env in planned:
        p = env.payload
        if isinstance(p, MemoryCreated | MemoryUpdated | MemoryReinforced | DuplicateSkipped):
            return str(p.memory_id)
    return None


def _given_up(memory: NamespaceMemory, fact: Fact) -> list[str]:
    """Active memories of the fact's subject that prefer or use what the fact says was given
    up ("prefers Rust over Go now" ends "prefers Go" and "uses Go for scripts")."""
    if not fact.replaces or not fact.subject:
        return []
    return [
        mid
        for mid in memory.slot_holders(fact.subject, ("preference:", "tool:"))
        if not memory.states[mid].immutable
        and any(prefers_item(memory.states[mid].text, item) for item in fact.replaces)
    ]


#: categories a plan is kept in ("I'm running the marathon in October" is a moment)
_PLAN_CATEGORIES = frozenset({"commitment", "decision", "moment"})


def _plans_naming(
    memory: NamespaceMemory, fact: Fact, at: datetime, heads: tuple[str, ...]
) -> list[str]:
    """Active plans of the fact's subject that name what it says was called off or moved
    ("my marathon is cancelled" ends "Maya is running the Dublin marathon in October"): a
    plan's category, or any memory dated after the change; never one of the same turn (the
    plan said instead: "I'm doing the half marathon instead, the marathon is cancelled")."""
    if not heads or not fact.subject:
        return []
    # every word of the plan's name ("dentist appointment", "call Matthew"), plural or not
    names = [
        [re.compile(rf"\b{re.escape(word)}(?:s|es)?\b", re.I) for word in name.split()]
        for name in heads
    ]
    return sorted(
        mid
        for mid, s in memory.states.items()
        if s.active
        and not s.immutable
        and s.subject == fact.subject
        and not set(s.source_turn_ids) & set(fact.source_turn_ids)
        and (
            s.category in _PLAN_CATEGORIES
            or any(d is not None and d > at for d in (s.valid_from, s.valid_until))
        )
        and any(all(w.search(s.text) for w in name) for name in names)
    )


def _plan_tags(
    memory: NamespaceMemory, created: Envelope[MemoryCreated], event: Any
) -> list[Envelope[Any]]:
    """Synaptic tagging and capture within the session, at the new memory's event time."""
    p = created.payload
    at = created.occurred_at
    config = TagConfig()
    tags = [
        Tag(s.memory_id, s.tagged_until - config.ttl, s.tagged_until, s.importance, s.stability)
        for mid in memory.tagged_in(created.session_id)
        if (s := memory.states[mid]).tagged_until is not None
    ]
    decision = on_memory(tags, Arrival(p.memory_id, p.importance, p.arousal), at, config)
    out: list[Envelope[Any]] = []
    for tag in decision.expired:
        out.append(
            event(
                TagExpired(
                    memory_id=tag.memory_id,
                    evidence={"rule": "tag_ttl", "expired_at": tag.expires_at.isoformat()},
                ),
                f"expire:{tag.memory_id}",
            )
        )
    for c in decision.captures:
        out.append(
            event(
                TagCaptured(
                    memory_id=c.memory_id,
                    captured_by=p.memory_id,
                    stability_before=c.stability_before,
                    stability_after=c.stability_after,
                    evidence=c.evidence(at),
                ),
                f"capture:{c.memory_id}",
            )
        )
    if decision.new_tag is not None:
        out.append(
            event(
                SynapticTagged(
                    memory_id=p.memory_id,
                    expires_at=decision.new_tag.expires_at,
                    importance=p.importance,
                    evidence={"rule": "weak_memory", **decision.evidence},
                ),
                "tag",
            )
        )
    return out


def covered_turns(events: Sequence[Envelope[Any]]) -> set[str]:
    """Turn ids whose extraction is recorded by ``events`` (TurnsExtracted)."""
    return {
        t.turn_id for e in events if isinstance(e.payload, TurnsExtracted) for t in e.payload.turns
    }


def _metadata(fact: Fact, sources: Sequence[BufferedTurn]) -> dict[str, Any]:
    """What the memory keeps verbatim: URLs, commands, paths, versions and ids of the turns
    it came from (its text, a paraphrase, may have dropped them), and the producer's
    metadata of those turns (merged) under 'turn'."""
    # the turns, not the memory's text: a memory's text is made of its turns' words (the
    # rule extractor copies spans; a model paraphrases and drops, it does not invent links)
    found: dict[str, Any] = metadata.merge(*(metadata.extract(t.text) for t in sources))
    producer: dict[str, Any] = {}
    for t in sources:  # the later turn's value wins, as in a dict update
        producer.update(t.meta or {})
    if producer:
        found["turn"] = producer
    return found
