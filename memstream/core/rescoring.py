"""Adjustments to a scored candidate list after scoring, and the answer's placed rule.

Recall scores its candidates (``core.scoring``) and then adjusts the scores for what the
question says: the assistant's replies and archived memories below the rest, the user's
preferences lifted for a request for help, a slot's holders for a question about the slot,
memories marked unhelpful for this very question scaled down. Each adjustment is the same
mechanism, ``rescored``: one value per memory (or none; ``when`` gives one value to the
memories a test picks, ``scaled`` each memory its own factor), a rule combining it with the
score, the value recorded in the memory's explanation, the list re-sorted. ``with_rule``
places the standing instruction a request falls under; ``known_and_not_over`` is the
``as_of`` cut.

Pure functions of the scored list and the memories' states.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from operator import mul
from typing import Any

from memstream.core.graph_walk import Reached
from memstream.core.memory_state import MemoryState
from memstream.core.replies import is_reply
from memstream.core.standing_instructions import POSITION, Applicable

#: an archived memory's score, when the caller asks for archived memories too
ARCHIVED_FACTOR = 0.5


def when(
    applies: Callable[[MemoryState], bool], value: float
) -> Callable[[MemoryState], float | None]:
    """``value`` for the memories ``applies`` picks, nothing (left as scored) for the rest:
    the assistant's replies or archived memories scaled down (``operator.mul``), the user's
    preferences or a slot's holders lifted toward 1 (``core.advice.lifted``), through
    ``rescored``."""
    return lambda st: value if applies(st) else None


def scaled(
    scored: Sequence[Any],
    states: dict[str, MemoryState],
    factor_of: Callable[[MemoryState], float],
    marker: str,
) -> list[Any]:
    """Each score times ``factor_of`` its memory."""

    def changed(st: MemoryState) -> float | None:
        f = factor_of(st)
        return None if f == 1.0 else f

    return rescored(scored, states, changed, mul, marker)


def rescored(
    scored: Sequence[Any],
    states: dict[str, MemoryState],
    param_of: Callable[[MemoryState], float | None],
    rescore: Callable[[float, float], float],
    marker: str,
) -> list[Any]:
    """``scored`` with the score of each memory ``param_of`` gives a value for replaced by
    ``rescore(score, value)`` (``marker``: value in its explain), re-sorted; the one
    mechanism behind every adjustment recall makes after scoring."""
    params = {s.memory_id: param_of(states[s.memory_id]) for s in scored}
    if all(p is None for p in params.values()):
        return list(scored)
    out = [
        replace(s, score=rescore(s.score, p), explain={**s.explain, marker: p})
        if (p := params[s.memory_id]) is not None
        else s
        for s in scored
    ]
    return sorted(out, key=lambda s: (-s.score, s.memory_id))


def a_reply(state: MemoryState) -> bool:
    return is_reply(state.kind, state.subject)


def archived(state: MemoryState) -> bool:
    return state.status == "archived"


def with_rule(
    answer: list[tuple[str, float, Reached | None]],
    rule: Applicable,
    k: int,
    position: int = POSITION,
) -> list[tuple[str, float, Reached | None]]:
    """``answer`` with the rule at POSITION (moved up if it was lower), scored as the result
    it precedes so scores stay in rank order; at most ``k``."""
    rest = [a for a in answer if a[0] != rule.memory_id]
    at = min(position, len(rest))
    if any(a[0] == rule.memory_id for a in answer[:at]):
        return answer[:k]
    score = rest[at][1] if at < len(rest) else (rest[-1][1] if rest else 0.0)
    return [*rest[:at], (rule.memory_id, score, None), *rest[at:]][:k]


def known_and_not_over(state: MemoryState, as_of: datetime) -> bool:
    """Written by ``as_of`` and not invalidated (or ended) by then."""
    ends = state.holds_until
    return state.created_at <= as_of and (ends is None or as_of < ends)
