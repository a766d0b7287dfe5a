"""The edges a flush's decisions imply, as memory-log events (``core/relations.py`` has
the rules). Deterministic like the rest of the write plan: ids derive from the decision
that caused the edge, times are event times."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.new_value import new_amounts, new_value_proposals
from memstream.core.relations import (
    Known,
    NewMemory,
    Proposal,
    RelationConfig,
    causal_clauses,
    causal_proposals,
    elaboration_proposals,
    entity_proposals,
    opens_with_consequence,
    to_prune,
)
from memstream.core.replacement import replaced_values, replacement_proposals
from memstream.core.replies import is_reply
from memstream.core.restatement import restatement_proposals, restates, says_change
from memstream.core.same_kind import others_of, same_kind_proposals
from memstream.schemas.envelope import DEFAULT_LIMITS, Envelope, Limits, make_event
from memstream.schemas.events import (
    MemoryCreated,
    MemorySuperseded,
    RelationAdded,
    RelationRemoved,
)
from memstream.schemas.ids import derived_id


def _known(memory: NamespaceMemory, mid: str) -> Known:
    s = memory.states[mid]
    return Known(mid, s.text, s.subject)


def proposals_for(
    memory: NamespaceMemory,
    decision: Envelope[Any],
    previous: str | None,
    config: RelationConfig,
) -> list[Proposal]:
    """The edges one decision of the plan implies (``memory`` already holds it)."""
    p = decision.payload
    if isinstance(p, MemorySuperseded):
        if p.superseded_by is None or p.superseded_by not in memory.states:
            return []
        out = [
            Proposal(
                p.superseded_by,
                p.memory_id,
                "supersedes",
                1.0,
                "supersession",
                {"reason": p.reason},
            )
        ]
        if p.reason == "contradiction":
            out.append(
                Proposal(
                    p.superseded_by,
                    p.memory_id,
                    "contradicts",
                    0.9,
                    "slot_contradiction",
                    {"slot": p.evidence.get("slot"), "subject": p.evidence.get("subject")},
                )
            )
        return out
    if not isinstance(p, MemoryCreated) or p.category == "summary":
        # a summary is linked to its members by the consolidation, not by words
        return []
    state = memory.states.get(p.memory_id)
    if state is None or is_reply(state.kind, state.subject):
        # a reply is linked to what it answers (its own rule), not by shared words: its
        # words are the assistant's, and would tie it to everything on the topic
        return []
    new = NewMemory(p.memory_id, state.text, state.subject, state.entities)
    near = memory.nearest(memory.vector(p.memory_id), config.clause_candidates + 1)
    candidates = {mid for mid in near if mid != p.memory_id}
    if causal_clauses(state.text):
        for _side, clause in causal_clauses(state.text):
            candidates.update(memory.nearest(memory.embed(clause), config.clause_candidates))
    candidates.discard(p.memory_id)
    known = [_known(memory, mid) for mid in sorted(candidates)]
    before = _known(memory, previous) if previous and opens_with_consequence(state.text) else None
    naming = {e: [m for m in memory.naming(e) if m != p.memory_id] for e in state.entities}
    return [
        *causal_proposals(new, known, before, config),
        *elaboration_proposals(new, [_known(memory, m) for m in near if m != p.memory_id]),
        *entity_proposals(new, naming, config),
        *_replacements(memory, new, near, naming),
    ]


def _replacements(
    memory: NamespaceMemory,
    new: NewMemory,
    near: Sequence[str],
    naming: dict[str, list[str]],
) -> list[Proposal]:
    """``supersedes`` edges to what a change said in passing replaced (``core.replacement``)
    or a quantity that moved (``core.new_value``), else to another of a kind kept one at a
    time (``core.same_kind``) or a state said again (``core.restatement``): among the
    memories naming the new one's entities (or another of its kind) and its nearest,
    oldest first."""
    replaced = replaced_values(new.text)
    # another of a kind kept one at a time ("upgraded to a Pixel"), said as a change
    others = others_of(new.text) if says_change(new.text) else []
    if not replaced and not new_amounts(new.text) and not restates(new) and not others:
        return []
    ids = {m for ms in naming.values() for m in ms} | set(near)
    ids.update(m for name in others for m in memory.naming(name))
    ids.discard(new.memory_id)
    earlier = sorted(
        (m for m in ids if m in memory.states and memory.states[m].active),
        key=lambda m: (memory.states[m].created_at, m),
    )
    known = [_known(memory, m) for m in earlier]
    found = [*replacement_proposals(new, known), *new_value_proposals(new, known)]
    if found or replaced:
        return found
    # another of the kind, or a state said again with a change, where no rule above names
    # what changed; said before it, not in the same turn ("moved to Porto" beside "lives
    # in Porto")
    this = memory.states[new.memory_id]
    before = [
        k
        for k in known
        if memory.states[k.memory_id].created_at < this.created_at
        and not set(memory.states[k.memory_id].source_turn_ids) & set(this.source_turn_ids)
    ]
    return same_kind_proposals(new, before) or restatement_proposals(new, before)


def declared_cause(cause: str, effect: str, extraction: Any) -> Proposal:
    """A ``causes`` edge its extractor declared (a model's ``caused_by``)."""
    model = getattr(extraction, "model", None) or getattr(extraction, "extractor", None)
    return Proposal(cause, effect, "causes", 0.8, "llm_caused_by", {"model": model})


def declared_relation(source: str, target: str, relation: str, extraction: Any) -> Proposal:
    """An edge of another type its extractor declared (a model's ``related``)."""
    model = getattr(extraction, "model", None) or getattr(extraction, "extractor", None)
    return Proposal(source, target, relation, 0.8, f"llm_{relation}", {"model": model})  # type: ignore[arg-type]


def plan_relations(
    memory: NamespaceMemory,
    decisions: Sequence[Envelope[Any]],
    previous: str | None,
    config: RelationConfig,
    producer: str,
    recorded_at: datetime,
    limits: Limits = DEFAULT_LIMITS,
    declared: Sequence[Proposal] = (),
) -> list[Envelope[Any]]:
    """Edge events for one fact's ``decisions`` (already applied to ``memory``) and the
    edges its extractor ``declared``, then any removals the namespace's bound needs.
    Applies what it returns to ``memory``."""
    out: list[Envelope[Any]] = []
    found = [(d, p) for d in decisions for p in proposals_for(memory, d, previous, config)]
    if decisions:
        found = [(decisions[0], p) for p in declared] + found
    for decision, proposal in found:
        known = memory.edges.get(proposal.key)
        if known is not None and known[0] >= proposal.confidence:
            continue  # said before, as strongly
        env = _event(
            RelationAdded(
                memory_id=proposal.source,
                target_id=proposal.target,
                relation=proposal.relation,
                confidence=proposal.confidence,
                rule=proposal.rule,
                evidence=proposal.evidence,
            ),
            decision,
            producer,
            recorded_at,
            limits,
        )
        memory.apply(env)
        out.append(env)
    if out:
        for key in to_prune(memory.edges, config):
            source, target, relation = key
            env = _event(
                RelationRemoved(
                    memory_id=source,
                    target_id=target,
                    relation=relation,  # type: ignore[arg-type]
                    reason="pruned",
                    evidence={
                        "rule": "namespace_edge_bound",
                        "confidence": memory.edges[key][0],
                        "max_edges": config.max_edges,
                        "keep_edges": config.keep_edges,
                    },
                ),
                out[-1],
                producer,
                recorded_at,
                limits,
            )
            memory.apply(env)
            out.append(env)
    return out


def _event(
    payload: RelationAdded | RelationRemoved,
    cause: Envelope[Any],
    producer: str,
    recorded_at: datetime,
    limits: Limits,
) -> Envelope[Any]:
    return make_event(
        payload,
        namespace=cause.namespace,
        session_id=cause.session_id,
        occurred_at=cause.occurred_at,
        causation_id=cause.event_id,
        producer=producer,
        event_id=derived_id(
            cause.occurred_at,
            "relation",
            cause.event_id,
            type(payload).__name__,
            payload.memory_id,
            payload.target_id,
            payload.relation,
        ),
        recorded_at=recorded_at,
        limits=limits,
    )
