"""The prediction-error gate: how a new fact relates to what the namespace already knows.

Decision order, for a fact that survived the content-hash check:
1. an active memory with the same subject and slot: near-identical is a REINFORCE, a new
   text that keeps everything the old one said and adds detail is an UPDATE, anything
   else is a new value for the slot: SUPERSEDE;
2. otherwise by similarity to the closest active memory:
   ``similarity > reinforce_above``: REINFORCE (nothing new, stability grows);
   ``update_min <= similarity <= reinforce_above``: UPDATE (overlap that adds detail);
   below ``update_min``: CREATE. Between ``create_below`` and ``update_min`` the fact is
   ambiguous; it is created as new (separate memories are recoverable, a wrong merge is
   not) and the evidence says it was borderline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Action = Literal["create", "update", "reinforce", "supersede"]


@dataclass(frozen=True, slots=True)
class GateConfig:
    create_below: float = 0.70
    update_min: float = 0.75
    reinforce_above: float = 0.92
    reinforce_factor: float = 1.2  # stability multiplier for a reinforcement
    max_stability: float = 100.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.create_below <= self.update_min <= self.reinforce_above <= 1.0:
            raise ValueError(
                "gate thresholds must satisfy 0 <= create_below <= update_min <= "
                f"reinforce_above <= 1, got {self.create_below}, {self.update_min}, "
                f"{self.reinforce_above}"
            )


@dataclass(frozen=True, slots=True)
class Neighbour:
    memory_id: str
    similarity: float
    text: str


@dataclass(frozen=True, slots=True)
class GateDecision:
    action: Action
    target_id: str | None
    similarity: float
    reason: str

    def evidence(self) -> dict[str, object]:
        return {
            "decision": self.action,
            "closest_memory_id": self.target_id,
            "similarity": round(self.similarity, 6),
            "reason": self.reason,
        }


def decide(
    closest: Neighbour | None,
    slot_holder: Neighbour | None,
    config: GateConfig,
    *,
    refines_slot: bool = False,
) -> GateDecision:
    """``refines_slot``: the new text says the slot holder's and more, without turning it
    around (``core.merge.says_more``): "Sean is no longer my coach" covers the words of
    "My coach is Sean" and ends it."""
    if slot_holder is not None:
        if slot_holder.similarity > config.reinforce_above:
            return GateDecision(
                "reinforce", slot_holder.memory_id, slot_holder.similarity, "same slot, same value"
            )
        if refines_slot:
            return GateDecision(
                "update", slot_holder.memory_id, slot_holder.similarity, "same slot, more detail"
            )
        return GateDecision(
            "supersede",
            slot_holder.memory_id,
            slot_holder.similarity,
            "same subject and slot, new value",
        )
    if closest is None:
        return GateDecision("create", None, 0.0, "nothing similar in this namespace")
    sim = closest.similarity
    if sim > config.reinforce_above:
        return GateDecision(
            "reinforce", closest.memory_id, sim, f"similarity {sim:.3f} > {config.reinforce_above}"
        )
    if sim >= config.update_min:
        return GateDecision(
            "update", closest.memory_id, sim, f"similarity {sim:.3f} in update band"
        )
    if sim >= config.create_below:
        return GateDecision(
            "create", closest.memory_id, sim, f"borderline similarity {sim:.3f}: kept separate"
        )
    return GateDecision(
        "create", closest.memory_id, sim, f"novel: similarity {sim:.3f} < {config.create_below}"
    )


def reinforced_stability(stability: float, config: GateConfig) -> float:
    return min(stability * config.reinforce_factor, config.max_stability)
