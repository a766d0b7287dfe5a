"""Q-learning of memory utility from feedback: pure rules the q-learner agent calls.

Q in [0, 1] is how useful a memory turned out to be; every memory starts at 0.5.

Public API
----------
``reward_of(outcome, reward) -> Reward``
    positive 1.0; negative 0.0; very_negative 0.0 with ``alpha_factor`` 2 (a larger
    step); correction 0.0 with ``wants_correction_link`` set; an explicit ``reward`` in
    [0, 1] is the value when given (the outcome still sets the step and the flag).
``credit_weight(rank, n) -> float``
    ``1 / log2(rank + 1)`` for ``1 <= rank <= n`` (rank 1: 1.0, rank 2: 0.63, rank 3:
    0.5, rank 7: 0.33), 0.0 outside the recall. The DCG discount: lower hits were less
    likely to be read, so they earn (or lose) less from a verdict on the whole recall,
    yet the decay is gentle enough that rank 10 still learns (0.29).
``utility_decay(q, days_since_use, rate=0.01) -> float``
    ``Q += rate * days * (0.5 - Q)``, the step capped at the whole gap so Q never
    overshoots 0.5: unused memories drift back to "unknown".
``q_update(q, reward, alpha=0.1, weight=1.0) -> float``
    ``Q <- Q + alpha * w * (r - Q)``, with ``alpha * w`` capped at 1, so Q stays in [0, 1].
``plan_q_updates(states, feedback, recall, at, alpha=0.1, scoped=False) -> list[QChange]``
    One ``QChange`` per target memory, decay first, then the update. ``scoped``: the
    feedback names the question it answered (core.scoped_feedback keeps a plain
    negative with that question), so a plain negative moves the shared Q by only
    ``SCOPED_NEGATIVE_SHARE`` of the step: a distractor for one question says little
    about the memory's use for others, an answer says it is worth finding. Targets: the
    feedback's ``memory_ids`` (named explicitly: weight 1.0, rank kept for evidence when
    the recall lists it); with no ``memory_ids``, every memory of ``recall`` weighted by
    ``credit_weight``. Unknown memories are skipped, repeats counted once; the order is
    that of ``memory_ids``, or (rank, id) for a recall, so planning is deterministic.
    ``QChange.evidence()`` is the dict for ``QValueUpdated.evidence``; ``alpha`` in a
    change is the effective step (already doubled for very_negative).

Decay days run from ``QState.last_use``, which the shell sets to the later of the last
access and the last Q update: a Q set at time T already includes the decay up to T, so
no idle day is counted twice. Idempotency by feedback event id is the shell's job.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

Outcome = Literal["positive", "negative", "very_negative", "correction"]

NEUTRAL_Q = 0.5
DEFAULT_ALPHA = 0.1
DECAY_RATE = 0.01  # per idle day, fraction of the gap to 0.5
VERY_NEGATIVE_FACTOR = 2.0
#: the share of the step a plain negative scoped to its question takes from the shared Q.
#: Learning bench, held-out recall@10 minus learning off, own set / BEAM dev: 1.0 (the
#: whole step) -0.006 / -0.005, 0.5 - / -0.001, 0.3 +0.018 / +0.003, 0.1 - / -0.002,
#: 0.0 -0.018 (own): without any negative the answers of the trained questions crowd others.
SCOPED_NEGATIVE_SHARE = 0.3

_OUTCOME_REWARD: dict[str, float] = {
    "positive": 1.0,
    "negative": 0.0,
    "very_negative": 0.0,
    "correction": 0.0,
}
_SECONDS_PER_DAY = 86_400.0


def _clamp01(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


@dataclass(frozen=True, slots=True)
class Reward:
    value: float
    alpha_factor: float = 1.0
    wants_correction_link: bool = False
    source: str = "explicit"


def reward_of(outcome: str | None, reward: float | None) -> Reward:
    """The reward a Feedback carries; raises ValueError when it carries none."""
    if outcome is not None and outcome not in _OUTCOME_REWARD:
        raise ValueError(f"unknown outcome {outcome!r}")
    factor = VERY_NEGATIVE_FACTOR if outcome == "very_negative" else 1.0
    correction = outcome == "correction"
    if reward is not None:
        if not 0.0 <= reward <= 1.0 or math.isnan(reward):
            raise ValueError(f"reward {reward!r} outside [0, 1]")
        return Reward(float(reward), factor, correction, "explicit")
    if outcome is None:
        raise ValueError("feedback needs an outcome or a reward")
    return Reward(_OUTCOME_REWARD[outcome], factor, correction, f"outcome:{outcome}")


def credit_weight(rank: int, n: int) -> float:
    """Share of a recall-wide verdict for the memory at ``rank`` (1-based) of ``n``."""
    if rank < 1 or rank > n:
        return 0.0
    return 1.0 / math.log2(rank + 1)


def utility_decay(q: float, days_since_use: float, rate: float = DECAY_RATE) -> float:
    q = _clamp01(q)
    step = min(max(rate * max(days_since_use, 0.0), 0.0), 1.0)  # 1.0 lands exactly on 0.5
    return q + step * (NEUTRAL_Q - q)


def q_update(q: float, reward: float, alpha: float = DEFAULT_ALPHA, weight: float = 1.0) -> float:
    step = _clamp01(alpha * weight)
    return _clamp01(_clamp01(q) + step * (_clamp01(reward) - _clamp01(q)))


def days_between(earlier: datetime | None, later: datetime) -> float:
    """Event-time days from ``earlier`` to ``later``; 0 when unknown or in the future."""
    if earlier is None:
        return 0.0
    return max((later - earlier).total_seconds() / _SECONDS_PER_DAY, 0.0)


@dataclass(frozen=True, slots=True)
class QState:
    q: float
    last_use: datetime | None = None  # later of last access and last Q update


@dataclass(frozen=True, slots=True)
class FeedbackView:
    """The parts of a ``schemas.events.Feedback`` the planner reads."""

    memory_ids: tuple[str, ...] = ()
    query_id: str | None = None
    outcome: Outcome | None = None
    reward: float | None = None

    @classmethod
    def of(cls, feedback: Any) -> FeedbackView:
        """From a Feedback payload (or anything with the same attributes)."""
        return cls(
            memory_ids=tuple(feedback.memory_ids),
            query_id=feedback.query_id,
            outcome=feedback.outcome,
            reward=feedback.reward,
        )


@dataclass(frozen=True, slots=True)
class QChange:
    memory_id: str
    old_q: float
    decayed_q: float
    new_q: float
    reward: float
    weight: float
    alpha: float
    decay_days: float
    rank: int | None = None
    reward_source: str = "explicit"
    wants_correction_link: bool = False

    def evidence(self) -> dict[str, Any]:
        return {
            "rule": "q_update",
            "old_q": round(self.old_q, 6),
            "decayed_q": round(self.decayed_q, 6),
            "decay_days": round(self.decay_days, 6),
            "reward_source": self.reward_source,
            "rank": self.rank,
            "correction_link": self.wants_correction_link,
        }


def _targets(
    feedback: FeedbackView, recall: Sequence[tuple[str, int]] | None
) -> list[tuple[str, float, int | None]]:
    ranks: dict[str, int] = {}
    for mid, rank in recall or ():
        if mid not in ranks or rank < ranks[mid]:
            ranks[mid] = rank
    if feedback.memory_ids:
        seen: dict[str, None] = dict.fromkeys(feedback.memory_ids)
        return [(mid, 1.0, ranks.get(mid)) for mid in seen]
    n = max(ranks.values(), default=0)
    ordered = sorted(ranks.items(), key=lambda kv: (kv[1], kv[0]))
    return [(mid, credit_weight(rank, n), rank) for mid, rank in ordered]


def plan_q_updates(
    states: Mapping[str, QState],
    feedback: FeedbackView,
    recall: Sequence[tuple[str, int]] | None,
    at: datetime,
    alpha: float = DEFAULT_ALPHA,
    scoped: bool = False,
) -> list[QChange]:
    """The Q changes one feedback event causes (see the module docstring)."""
    r = reward_of(feedback.outcome, feedback.reward)
    share = SCOPED_NEGATIVE_SHARE if scoped and feedback.outcome == "negative" else 1.0
    eff_alpha = _clamp01(alpha * r.alpha_factor * share)
    changes: list[QChange] = []
    for mid, weight, rank in _targets(feedback, recall):
        state = states.get(mid)
        if state is None or weight <= 0.0:
            continue
        days = days_between(state.last_use, at)
        old = _clamp01(state.q)
        decayed = utility_decay(old, days)
        changes.append(
            QChange(
                memory_id=mid,
                old_q=old,
                decayed_q=decayed,
                new_q=q_update(decayed, r.value, eff_alpha, weight),
                reward=r.value,
                weight=_clamp01(weight),
                alpha=eff_alpha,
                decay_days=days,
                rank=rank,
                reward_source=r.source,
                wants_correction_link=r.wants_correction_link,
            )
        )
    return changes
