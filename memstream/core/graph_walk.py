"""Walking the relation graph from what recall found: which edges a question follows, how
far, and where a reached memory goes in the answer. Pure; the recall service fetches the
states of each level (``consumers/recall.py``).

A causal question ("why ...", "what led to ...") follows ``causes`` both ways up to two
hops: the answer to "why does my knee hurt?" is the cause of the memory that matched.
Every reached memory carries its path, so ``explain`` shows each hop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memstream.core.relations import edges_of

#: intent kind -> (relations followed, hops)
FOLLOW: dict[str, tuple[frozenset[str], int]] = {
    "causal": (frozenset({"causes"}), 2),
}
#: a reached memory scores its anchor's score times the path's confidence times this per hop
HOP_DISCOUNT = 0.9
#: reached memories per anchor (the strongest edges first)
PER_ANCHOR = 2
#: anchors: the top results a walk starts from
ANCHORS = 3


@dataclass(frozen=True, slots=True)
class Hop:
    source: str
    relation: str
    target: str
    confidence: float

    def as_dict(self) -> dict[str, object]:
        return {
            "from": self.source,
            "relation": self.relation,
            "to": self.target,
            "confidence": self.confidence,
        }


@dataclass(frozen=True, slots=True)
class Reached:
    memory_id: str
    anchor: str
    path: tuple[Hop, ...]
    weight: float  # product of the path's confidences and the hop discounts


def step(
    frontier: Sequence[Reached],
    relations_of: Mapping[str, Sequence[str]],
    follow: frozenset[str],
    seen: set[str],
) -> list[Reached]:
    """One hop further from every memory of ``frontier`` (a memory's ``relations`` entries in
    ``relations_of``). Memories in ``seen`` are not reached again; ``seen`` grows."""
    out: list[Reached] = []
    for node in frontier:
        edges = [e for e in edges_of(relations_of.get(node.memory_id, ())) if e.relation in follow]
        edges.sort(key=lambda e: (-e.confidence, e.other))
        taken = 0
        for e in edges:
            if taken >= PER_ANCHOR:
                break
            if e.other in seen:
                continue
            seen.add(e.other)
            taken += 1
            hop = (
                Hop(node.memory_id, e.relation, e.other, e.confidence)
                if e.direction == "out"
                else Hop(e.other, e.relation, node.memory_id, e.confidence)
            )
            out.append(
                Reached(
                    e.other,
                    node.anchor,
                    (*node.path, hop),
                    round(node.weight * e.confidence * HOP_DISCOUNT, 6),
                )
            )
    return out


def walk(
    anchors: Sequence[str],
    follow: frozenset[str],
    hops: int,
    relations_of: Callable[[Sequence[str]], Mapping[str, Sequence[str]]],
    admit: Callable[[str], bool],
) -> list[Reached]:
    """Every memory reached from ``anchors`` within ``hops``; ``relations_of`` gives the
    relations of a level's memories (fetched by the shell), ``admit`` says whether a reached
    memory may be answered (active, inside the filters)."""
    seen = set(anchors)
    frontier = [Reached(a, a, (), 1.0) for a in anchors]
    reached: list[Reached] = []
    known = dict(relations_of(list(anchors)))
    for _ in range(hops):
        nxt = step(frontier, known, follow, seen)
        if not nxt:
            break
        known.update(relations_of([r.memory_id for r in nxt]))
        nxt = [r for r in nxt if admit(r.memory_id)]
        reached.extend(nxt)
        frontier = nxt
    return reached


def placed(
    ranked: Sequence[tuple[str, float]], reached: Sequence[Reached], k: int
) -> list[tuple[str, float, Reached | None]]:
    """The answer with each reached memory right after the memory its path ends at (its
    anchor's branch), cut to ``k``. ``ranked``: (memory id, score), best first."""
    present = {mid for mid, _ in ranked}
    children: dict[str, list[Reached]] = {}
    for r in reached:
        if r.memory_id in present:
            continue
        parent = r.path[-1].source if r.path[-1].target == r.memory_id else r.path[-1].target
        children.setdefault(parent, []).append(r)
    scores = dict(ranked)
    out: list[tuple[str, float, Reached | None]] = []

    def emit(mid: str, score: float, via: Reached | None) -> None:
        out.append((mid, score, via))
        for child in children.pop(mid, []):
            emit(child.memory_id, round(scores[child.anchor] * child.weight, 6), child)

    for mid, score in ranked:
        emit(mid, score, None)
    return out[:k]


def links_between(
    ids: Sequence[str], relations_of: Mapping[str, Sequence[str]]
) -> dict[str, list[dict[str, object]]]:
    """For each answered memory, its edges to other answered memories (for ``explain``)."""
    present = set(ids)
    out: dict[str, list[dict[str, object]]] = {}
    for mid in ids:
        for e in edges_of(relations_of.get(mid, ())):
            if e.other in present:
                out.setdefault(mid, []).append(
                    {
                        "relation": e.relation,
                        "direction": e.direction,
                        "other": e.other,
                        "confidence": e.confidence,
                    }
                )
    return out
