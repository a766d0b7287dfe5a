"""Recall scoring: one candidate from the store, the query's context and intent, one score.

``score = sum(weight[c] * value[c] for c in COMPONENTS)`` with every value in [0, 1] and
the intent profile's weights (non-negative, summing to 1 in every built-in profile), so a
score is in [0, 1]. ``Scored.explain`` holds, for each component ``c``, ``explain[c]``
(its value) and ``explain[c + ".w"]`` (its weight), plus ``relevance.raw`` (the fused
score before normalising); the score is exactly-rounded ``fsum`` of value x weight.

Components (values):
``relevance``     fused score (recall passes core.fusion's convex combination of the
                  channel scores; the store's RRF score works too) / the largest in the
                  candidate set (``relevance_max``); without a set maximum, / the best
                  possible two-channel RRF ``2/(60+1)``.
``activation``    ACT-R base level from access count and time since creation and last use,
                  logistic-squashed (core.activation).
``retention``     forgetting curve since last use (or creation), stability-scaled; Weibull
                  or the FSRS-style power law (core.retention).
``q_value``       learned utility, ``importance`` write-time importance (both clamped).
``tier``          core 1.0, working 0.5, peripheral 0.0.
``entity``        share of the query's entities found in the memory's entities or text.
``session``       1 when written in the asking session.
``coactivation``  Hebbian: co-retrieved 3+ times with another top candidate (core.activation).
``validity``      1 when the memory is true at the time asked about: ``at`` if the query
                  names one (valid_from <= at < valid_until), else now for an active memory;
                  for history questions (``include_superseded``) without a time, superseded
                  memories count as valid too. Archived and deprecated memories: 0.
``pinned``        1 when pinned.
``event_time``    the query names a time (``ScoringContext.time``): 1 when the memory's
                  event time (its ``valid_from``, the date its text names, else when it was
                  said) falls in that span (or before / after it, as the query relates);
                  0.5 for a state that began before the span and still held at its start
                  (true then, though not said then); 0 otherwise. Its weight is 0 unless
                  the query names a time (``core.intent.with_time_match``).

Learned utility then scales the sum (``with_utility``): a memory the agent's feedback
found useful (Q > 0.5) moves toward 1, a useless one (Q < 0.5) shrinks, by up to
``utility_gain`` (0.5 by default) of the way; Q = 0.5, where every memory starts and where
unused ones drift back, leaves the score as it is, so fresh memories are never penalised
and feedback is what moves the ranking (its weighted term alone moved a score by ~0.003).
``explain["utility"]`` is the factor's effect, ``explain["score.before_utility"]`` the sum.

Times are event times passed in (``ScoringContext.now``), never the wall clock; all
datetimes must share one convention (timezone-aware UTC in this project).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from typing import Final

from memstream.core.activation import DEFAULT_ACTIVATION, ActivationParams, activation, hebbian
from memstream.core.intent import IntentProfile
from memstream.core.memory_state import MemoryState
from memstream.core.query_time import TimeRef
from memstream.core.retention import DEFAULT_RETENTION, RetentionModel, RetentionParams, retention
from memstream.core.tokens import DEFAULT_TOKENIZER

COMPONENTS: Final[tuple[str, ...]] = (
    "relevance",
    "activation",
    "retention",
    "q_value",
    "importance",
    "tier",
    "entity",
    "session",
    "coactivation",
    "validity",
    "pinned",
    "event_time",
)
TIER_VALUE: Final[dict[str, float]] = {"core": 1.0, "working": 0.5, "peripheral": 0.0}
RRF_BEST: Final = 2.0 / (60 + 1)  # rank 1 in both channels
HEBBIAN_PEERS: Final = 5  # top candidates (by relevance) a co-activation link must reach
_DAY_SECONDS: Final = 86400.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One memory as recall sees it: the store's hit plus the memory's state."""

    memory_id: str
    text: str
    relevance: float  # fused score (core.fusion, or the store's RRF)
    dense_rank: int | None = None  # 1-based rank per channel; None when not found there
    sparse_rank: int | None = None
    created_at: datetime
    last_access: datetime | None = None
    access_count: int = 0  # retrievals since creation
    stability: float = 1.0
    q_value: float = 0.5
    importance: float = 0.5
    tier: str = "working"
    entities: tuple[str, ...] = ()
    session_id: str | None = None
    pinned: bool = False
    status: str = "active"
    valid_from: datetime | None = None
    valid_until: datetime | None = None

    @classmethod
    def from_state(
        cls,
        state: MemoryState,
        *,
        relevance: float,
        dense_rank: int | None = None,
        sparse_rank: int | None = None,
        last_access: datetime | None = None,
        access_count: int = 0,
    ) -> Candidate:
        """A candidate from a folded memory state and its hit (access data is kept apart
        from the memory log)."""
        return cls(
            memory_id=state.memory_id,
            text=state.text,
            relevance=relevance,
            dense_rank=dense_rank,
            sparse_rank=sparse_rank,
            created_at=state.created_at,
            last_access=last_access,
            access_count=access_count,
            stability=state.stability,
            q_value=state.q_value,
            importance=state.importance,
            tier=state.tier,
            entities=state.entities,
            session_id=state.session_id,
            pinned=state.pinned,
            status=state.status,
            valid_from=state.valid_from,
            valid_until=state.holds_until,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoringContext:
    now: datetime  # event time of the query
    query_entities: frozenset[str] = frozenset()
    session_id: str | None = None
    coactivation: Mapping[tuple[str, str], int] = field(default_factory=dict)  # by pair()
    peers: frozenset[str] = frozenset()  # top candidates for co-activation; score_all fills
    retention_model: RetentionModel = "weibull"
    retention_params: RetentionParams = DEFAULT_RETENTION
    activation_params: ActivationParams = DEFAULT_ACTIVATION
    at: datetime | None = None  # the time the query asks about (Intent.at)
    include_superseded: bool = False  # Intent.include_superseded
    relevance_max: float | None = None  # the candidate set's largest relevance
    time: TimeRef | None = None  # the span the query names (Intent.time)
    # the time is all the query asks about ("what did I do in March?"): what happened in
    # the span, not what held through it (Intent.time_only)
    time_only: bool = False
    utility_gain: float = 0.5  # how far learned Q may move a score (see with_utility)


@dataclass(frozen=True, slots=True)
class Scored:
    memory_id: str
    score: float
    explain: dict[str, float]  # component -> value, component + ".w" -> weight

    def contribution(self, component: str) -> float:
        return self.explain[component] * self.explain[component + ".w"]


def _unit(x: float) -> float:
    """Clamp to [0, 1]; NaN (bad data) counts as 0."""
    if x >= 1.0:
        return 1.0
    return x if x > 0.0 else 0.0


def _days(later: datetime, earlier: datetime) -> float:
    return max((later - earlier).total_seconds() / _DAY_SECONDS, 0.0)


@lru_cache(maxsize=1 << 15)  # the same memories' texts and entities, recall after recall
def _norm_words(text: str) -> str:
    return " " + " ".join(DEFAULT_TOKENIZER.words(text)) + " "


def entity_overlap(query_entities: frozenset[str], entities: Sequence[str], text: str) -> float:
    """Share of the query's entities the memory names, in its entity list or as whole
    words of its text (case-insensitive, same tokenizer as the indexes)."""
    wanted = {_norm_words(e) for e in query_entities} - {"  "}
    if not wanted:
        return 0.0
    have = {_norm_words(e) for e in entities}
    body = _norm_words(text)
    return sum(1 for e in wanted if e in have or e in body) / len(wanted)


def validity(c: Candidate, context: ScoringContext) -> float:
    if c.status not in ("active", "superseded"):
        return 0.0
    if context.at is None:
        if c.status == "superseded":
            return 1.0 if context.include_superseded else 0.0
        at = context.now
    else:
        at = context.at
    after_start = c.valid_from is None or c.valid_from <= at
    before_end = c.valid_until is None or at < c.valid_until
    return 1.0 if after_start and before_end else 0.0


def event_time_match(c: Candidate, time: TimeRef | None, *, held_counts: bool = True) -> float:
    if time is None:
        return 0.0
    at = c.valid_from or c.created_at
    if time.relation == "before":
        inside = at < time.start
    elif time.relation == "after":
        inside = at >= time.end
    elif time.relation == "since":
        inside = at >= time.start
    else:
        inside = time.start <= at < time.end
    if inside:
        return 1.0
    held = (
        held_counts
        and time.relation == "during"
        and at < time.start
        and (c.valid_until is None or c.valid_until > time.start)
        and c.status in ("active", "superseded")
    )
    return 0.5 if held else 0.0


def components(c: Candidate, context: ScoringContext) -> dict[str, float]:
    """The value of every component, each in [0, 1]."""
    now = context.now
    top = context.relevance_max if context.relevance_max and context.relevance_max > 0 else None
    relevance = _unit(c.relevance / (top or RRF_BEST))
    last_use = max(c.last_access, c.created_at) if c.last_access else c.created_at
    since_last = _days(now, last_use)
    same_session = context.session_id is not None and c.session_id == context.session_id
    return {
        "relevance": relevance,
        "activation": activation(
            c.access_count, _days(now, c.created_at), since_last, context.activation_params
        ),
        "retention": retention(
            since_last,
            stability=c.stability,
            model=context.retention_model,
            params=context.retention_params,
        ),
        "q_value": _unit(c.q_value),
        "importance": _unit(c.importance),
        "tier": TIER_VALUE.get(c.tier, 0.0),
        "entity": entity_overlap(context.query_entities, c.entities, c.text),
        "session": 1.0 if same_session else 0.0,
        "coactivation": hebbian(
            c.memory_id, context.peers, context.coactivation, context.activation_params
        ),
        "validity": validity(c, context),
        "pinned": 1.0 if c.pinned else 0.0,
        "event_time": event_time_match(c, context.time, held_counts=not context.time_only),
    }


def with_utility(total: float, q: float, gain: float) -> float:
    """``total`` in [0, 1] scaled by learned utility ``q``: identity at q = 0.5; q = 1 moves
    it ``gain`` of the way to 1, q = 0 takes ``gain`` of it away. Stays in [0, 1] and keeps
    the order of equal-q scores."""
    q, gain = _unit(q), _unit(gain)
    if q >= 0.5:
        return total + (1.0 - total) * gain * 2.0 * (q - 0.5)
    return total * (1.0 - gain * 2.0 * (0.5 - q))


def score(
    candidate: Candidate,
    context: ScoringContext,
    profile: IntentProfile,
    weights: Mapping[str, float] | None = None,
) -> Scored:
    """Weighted sum of the components under ``profile``, scaled by learned utility, with
    its explanation. ``weights``: ``profile.weights()`` when already at hand (it walks the
    dataclass's fields: a tenth of scoring's time when taken per candidate)."""
    values = components(candidate, context)
    weights = profile.weights() if weights is None else weights
    explain: dict[str, float] = {}
    for name in COMPONENTS:
        explain[name] = values[name]
        explain[name + ".w"] = weights[name]
    explain["relevance.raw"] = candidate.relevance
    total = math.fsum(values[name] * weights[name] for name in COMPONENTS)
    final = with_utility(total, values["q_value"], context.utility_gain)
    if final != total:
        explain["score.before_utility"] = total
        explain["utility"] = final - total
    return Scored(candidate.memory_id, final, explain)


def score_all(
    candidates: Sequence[Candidate], context: ScoringContext, profile: IntentProfile
) -> list[Scored]:
    """Score a candidate set, best first (ties by memory id). Relevance is normalised by
    the set's maximum and co-activation looks at the set's top ``HEBBIAN_PEERS`` by
    relevance, unless the context already sets them."""
    if not candidates:
        return []
    if context.relevance_max is None:
        best = max((c.relevance for c in candidates if c.relevance == c.relevance), default=0.0)
        context = replace(context, relevance_max=best if best > 0 else None)
    if not context.peers:
        ranked = sorted(candidates, key=lambda c: (-_nan_to_zero(c.relevance), c.memory_id))
        context = replace(context, peers=frozenset(c.memory_id for c in ranked[:HEBBIAN_PEERS]))
    weights = profile.weights()
    scored = [score(c, context, profile, weights) for c in candidates]
    return sorted(scored, key=lambda s: (-s.score, s.memory_id))


def _nan_to_zero(x: float) -> float:
    return x if x == x else 0.0  # NaN sorts as 0
