"""Maximal marginal relevance: pick the next memory that is relevant and unlike the picked.

Each step takes ``argmax  lambda_ * rel(i) - (1 - lambda_) * max_{j picked} cos(i, j)``
with ``rel`` the score divided by the best score (so ``lambda_`` trades like against
like whatever the score scale). ``lambda_ = 1`` is the plain ranking, ``0`` pure novelty.
A memory without a usable vector (missing, zero, non-finite or of another dimension) is
similar to nothing. Ties go to the higher score, then the smaller memory id, so the
result does not depend on the input order. Repeated memory ids count once (best score).

``sources`` (memory id -> the conversation turns it was extracted from) makes two memories
of one turn count as repeats (similarity 1) whatever their vectors: one statement split
into several facts should not fill the k slots while other turns wait. A fact that is
clearly more relevant than the alternatives still gets in (its gain is lowered by
``1 - lambda_``, not zeroed). On the shipped evaluation set (``bench/retrieval_eval.py``)
this raised evidence recall@20 by 0.02 and left @5 and @10 within 0.01.

``derived`` (summaries: memories made from other memories, citing their source turns) are
folded behind their members: a derived memory that shares a source turn with any other
memory of the pool takes no slot (the members say it first-hand; the summary restates them
with less detail and would otherwise push the evidence out, as dream-cycle summaries did
in 29% of the top tens measured before); one whose members are all absent competes as any
other. ``folded`` lists the derived memories left out this way, for the explanation.

``times`` and ``time_scale`` (for a question asked across the whole history: "the order in
which I brought up ...", "a summary of how ... developed") make two memories close in time
alike too, ``exp(-|t_i - t_j| / time_scale)``, so the picks spread over the conversations
instead of gathering in the one stretch that shares most words with the question. On
BEAM's development conversations (``python -m bench.retrieval_eval --dev``) a scale of 5%
of the candidates' time range raised evidence recall@10 0.671 -> 0.679 (event ordering
0.330 -> 0.344, multi-session reasoning 0.552 -> 0.605); 15% gave 0.679, a lower
``lambda_`` (0.5) 0.670, half the weight 0.671.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memstream.core.scoring import Scored

#: the time scale of a question across the history, as a share of its candidates' time range
SPREAD = 0.05


def spread_scale(times: Mapping[str, float]) -> float:
    """The time scale that spreads picks over ``times`` (memory id -> seconds): ``SPREAD`` of
    their range; 0 (no spread) for no times or a single instant."""
    return SPREAD * (max(times.values()) - min(times.values())) if times else 0.0


def _unit_rows(ids: Sequence[str], vectors: Mapping[str, NDArray[Any]]) -> NDArray[np.float64]:
    """The vectors of ``ids`` scaled to unit length, one row each; a row of zeros for a
    missing, zero, non-finite or other-dimension vector. The norms are taken for all rows
    at once: one numpy call per row took ~1.1 ms for 160 candidates, this ~0.3 ms."""
    dim = next((np.asarray(vectors[i]).size for i in ids if i in vectors), 0)
    rows = np.zeros((len(ids), dim), dtype=np.float64)
    for row, memory_id in enumerate(ids):
        if memory_id in vectors:
            v = np.asarray(vectors[memory_id], dtype=np.float64).ravel()
            if v.size == dim:
                rows[row] = v
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    usable = np.isfinite(norms) & (norms > 0.0)
    rows[usable] /= norms[usable, None]
    rows[~usable] = 0.0
    return rows


def _same_source(ids: Sequence[str], sources: Mapping[str, Collection[str]]) -> NDArray[np.bool_]:
    """``out[i, j]``: memories ``i`` and ``j`` (i != j) share a source turn."""
    n = len(ids)
    out = np.zeros((n, n), dtype=bool)
    by_turn: dict[str, list[int]] = {}
    for row, memory_id in enumerate(ids):
        for turn in set(sources.get(memory_id, ())):
            by_turn.setdefault(turn, []).append(row)
    for rows in by_turn.values():
        if len(rows) > 1:
            out[np.ix_(rows, rows)] = True
    np.fill_diagonal(out, False)
    return out


def folded(
    ids: Collection[str], derived: Collection[str], sources: Mapping[str, Collection[str]]
) -> list[str]:
    """The derived memories among ``ids`` that share a source turn with another of them
    that is not derived (sorted)."""
    member_turns = {
        t for m in ids if m not in derived for t in sources.get(m, ())
    }  # turns the primary memories cite
    return sorted(m for m in ids if m in derived and member_turns.intersection(sources.get(m, ())))


def mmr(
    scored: Sequence[Scored],
    vectors: Mapping[str, NDArray[Any]],
    lambda_: float = 0.7,
    k: int = 10,
    sources: Mapping[str, Collection[str]] | None = None,
    derived: Collection[str] = (),
    times: Mapping[str, float] | None = None,
    time_scale: float = 0.0,
) -> list[Scored]:
    """Up to ``k`` of ``scored`` in MMR order, each memory at most once, derived memories
    folded behind their members (see ``folded``). ``times`` (memory id -> seconds) with
    ``time_scale`` > 0 spreads the picks over time (see the module's docstring)."""
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError("lambda_ must be in [0, 1]")
    best: dict[str, Scored] = {}
    for s in scored:
        kept = best.get(s.memory_id)
        if kept is None or s.score > kept.score:
            best[s.memory_id] = s
    if derived and sources:
        for m in folded(best, frozenset(derived), sources):
            del best[m]
    pool = sorted(best.values(), key=lambda s: (-_finite(s.score), s.memory_id))
    if k <= 0 or not pool:
        return []
    scores = np.array([_finite(s.score) for s in pool])
    top = float(scores.max())
    rel = scores / top if top > 0.0 else np.zeros_like(scores)
    unit = _unit_rows([s.memory_id for s in pool], vectors)
    sims = unit @ unit.T
    if sources:
        sims = np.where(_same_source([s.memory_id for s in pool], sources), 1.0, sims)
    if times and time_scale > 0.0:  # close in time counts as alike: exp(-|dt| / scale)
        t = np.array([times.get(s.memory_id, np.nan) for s in pool], dtype=np.float64)
        near = np.exp(-np.abs(t[:, None] - t[None, :]) / time_scale)
        near = np.where(np.isfinite(near), near, 0.0)
        np.fill_diagonal(near, 0.0)
        sims = np.maximum(sims, near)
    redundancy = np.zeros(len(pool))  # max similarity to the picked; 0 before the first pick
    free = np.ones(len(pool), dtype=bool)
    picked: list[int] = []
    for _ in range(min(k, len(pool))):
        gain = np.where(free, lambda_ * rel - (1.0 - lambda_) * redundancy, -np.inf)
        i = int(np.argmax(gain))  # first maximum: pool order breaks ties
        picked.append(i)
        free[i] = False
        redundancy = sims[i] if len(picked) == 1 else np.maximum(redundancy, sims[i])
    return [pool[i] for i in picked]


def _finite(x: float) -> float:
    return x if np.isfinite(x) else 0.0
