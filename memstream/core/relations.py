"""Typed edges between memories: how they are written on a memory, detected at write time,
and bounded per namespace. Pure: the write plan turns proposals into ``RelationAdded`` /
``RelationRemoved`` events and every reducer applies those.

An edge is kept on both of its memories (``MemoryState.relations``): ``causes>ID 0.80``
on the cause (outgoing), ``causes<ID 0.80`` on the effect (incoming), so recall walks the
graph from any memory it found without a second store. ``>`` and ``<`` are not in the id
alphabet (``schemas.events.ID``), so an entry parses back unambiguously.

Rules (each proposal names its rule in the event):

- ``causal_wording`` — a memory that says "because (of) X", "due to X", "X led to Y",
  "X, so Y", "that's why Y": the clause on the cause side names an earlier memory (its
  content words), which becomes the cause of the new one; the effect side likewise.
- ``causal_anaphora`` — a memory that opens with "That's why" / "So" / "As a result" is
  the effect of the memory said just before it in the same turn.
- ``shared_entity`` — a memory naming a specific entity (not its own subject, and one
  that few memories name) is linked to the latest memories naming it.
- ``elaboration`` — a new memory that says everything an earlier one of the same subject
  says, and more.
- ``slot_contradiction`` / ``supersession`` — written beside the supersede decisions.
- ``replacement`` / ``new_value`` — a change said in passing ("X instead of Y") or a
  quantity that moved ("down to one cup a day") supersedes the earlier memories that held
  the old value, which stay active (``core/replacement.py``, ``core/new_value.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from memstream.core.tokens import tokenize

RelationType = Literal[
    "supersedes", "contradicts", "causes", "elaborates", "same_entity", "related_to"
]
RELATION_TYPES: tuple[RelationType, ...] = (
    "supersedes",
    "contradicts",
    "causes",
    "elaborates",
    "same_entity",
    "related_to",
)
Direction = Literal["out", "in"]


@dataclass(frozen=True, slots=True)
class RelationConfig:
    #: the design's bound: past ``max_edges`` live edges in a namespace, the weakest go until
    #: ``keep_edges`` remain (ties: the oldest first)
    max_edges: int = 1000
    keep_edges: int = 900
    #: a shared entity links to at most this many of the latest memories naming it ...
    entity_links: int = 2
    #: ... and only while at most this many memories name it (a name on every memory is
    #: no link at all)
    entity_max_memories: int = 12
    #: a causal clause names a memory when this many of its content words, and this share
    #: of them, are in the memory
    clause_min_words: int = 2
    #: ... and a clause longer than this names no one memory (a pasted block of code, a list)
    clause_max_words: int = 20
    clause_min_share: float = 0.6
    #: how many nearest memories a clause is compared with
    clause_candidates: int = 8

    def __post_init__(self) -> None:
        if not 0 < self.keep_edges <= self.max_edges:
            raise ValueError("need 0 < keep_edges <= max_edges")


@dataclass(frozen=True, slots=True)
class Edge:
    """One entry of ``MemoryState.relations``, seen from the memory that holds it."""

    relation: str
    direction: Direction
    other: str
    confidence: float

    def entry(self) -> str:
        return f"{self.relation}{'>' if self.direction == 'out' else '<'}{self.other} {self.confidence:.3f}"


def parse(entry: str) -> Edge:
    head, _, conf = entry.rpartition(" ")
    for mark, direction in ((">", "out"), ("<", "in")):
        if mark in head:
            relation, _, other = head.partition(mark)
            return Edge(relation, direction, other, float(conf))  # type: ignore[arg-type]
    raise ValueError(f"not a relation entry: {entry!r}")


def edges_of(relations: Iterable[str]) -> list[Edge]:
    return [parse(e) for e in relations]


def updated(
    relations: tuple[str, ...],
    holder: str,
    source: str,
    target: str,
    relation: str,
    confidence: float | None,
) -> tuple[str, ...]:
    """``relations`` of memory ``holder`` after an edge source -> target was added (with
    ``confidence``) or removed (``None``)."""
    direction: Direction = "out" if holder == source else "in"
    other = target if direction == "out" else source
    kept = tuple(
        e
        for e in relations
        if not (
            (p := parse(e)).relation == relation and p.direction == direction and p.other == other
        )
    )
    if confidence is None:
        return kept
    return (*kept, Edge(relation, direction, other, confidence).entry())


# --- detection ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Proposal:
    source: str
    target: str
    relation: RelationType
    confidence: float
    rule: str
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.target, self.relation)


# the clause after the marker names the cause: "my knee hurts because of the training"
_CAUSE_FOLLOWS = re.compile(
    r"\b(?:because(?: of)?|due to|owing to|as a result of|caused by|thanks to)\b", re.I
)
# the clause after the marker names the effect: "the training led to a knee injury"
_EFFECT_FOLLOWS = re.compile(
    r"(?:,\s*so\b|\bso (?:i|we|he|she|they)\b|\b(?:that|this|which) is why\b|"
    r"\b(?:that|this|which)'s why\b|\b(?:led|leads|leading) to\b|\bresulted in\b|"
    r"\bas a result\b|\btherefore\b)",
    re.I,
)
# an opening that points back at what was said just before
_ANAPHORIC_OPENING = re.compile(
    r"^\s*(?:that's why|that is why|this is why|so|as a result|therefore|because of (?:that|this)|"
    r"which is why|hence)\b",
    re.I,
)


def causal_clauses(text: str) -> list[tuple[Literal["cause", "effect"], str]]:
    """The clauses of ``text`` that name the cause or the effect of what it says.

    "The knee hurts because of the training" -> [("cause", "the training")];
    "The training led to a knee injury" -> [("cause", "The training"), ("effect", "a knee
    injury")] — either side may name an earlier memory."""
    out: list[tuple[Literal["cause", "effect"], str]] = []
    m = _CAUSE_FOLLOWS.search(text)
    if m is not None:
        out.append(("cause", text[m.end() :]))
        if m.start() > 0:
            out.append(("effect", text[: m.start()]))
        return out
    m = _EFFECT_FOLLOWS.search(text)
    if m is not None and m.start() > 0:
        out.append(("cause", text[: m.start()]))
        out.append(("effect", text[m.end() :]))
    return out


def opens_with_consequence(text: str) -> bool:
    """ "That's why Sam skipped the dinner": the effect of what was said just before."""
    return _ANAPHORIC_OPENING.match(text) is not None


@lru_cache(maxsize=1 << 15)
def owner_of(subject: str | None) -> str:
    """Whose a memory's subject is: "maya" of "maya's cat" (and of "maya"); "" for none."""
    return re.split(r"['’]s\b", subject, maxsplit=1)[0] if subject else ""


def content_words(text: str) -> frozenset[str]:
    # cached: the same earlier memories are candidates of one new memory after another
    return frozenset(tokenize(text, stem=True))


@dataclass(frozen=True, slots=True)
class NewMemory:
    memory_id: str
    text: str
    subject: str | None
    entities: tuple[str, ...]

    @property
    def asks(self) -> bool:
        """A question ("should I use X instead of Y?"): it states no change."""
        return self.text.rstrip().rstrip("\"')").endswith("?")


@dataclass(frozen=True, slots=True)
class Known:
    """What detection reads of an earlier memory."""

    memory_id: str
    text: str
    subject: str | None


def clause_match(
    clause: str, candidates: Sequence[Known], config: RelationConfig
) -> tuple[Known, float, list[str]] | None:
    """The candidate the clause names: most of the clause's content words in it."""
    words = content_words(clause)
    if not config.clause_min_words <= len(words) <= config.clause_max_words:
        return None
    best: tuple[Known, float, list[str]] | None = None
    for known in candidates:
        shared = sorted(words & content_words(known.text))
        share = len(shared) / len(words)
        strong = len(shared) >= config.clause_min_words and share >= config.clause_min_share
        if strong and (best is None or share > best[1]):
            best = (known, share, shared)
    return best


def causal_proposals(
    new: NewMemory,
    candidates: Sequence[Known],
    previous: Known | None,
    config: RelationConfig,
) -> list[Proposal]:
    """``candidates``: the earlier memories nearest to the new one (any order);
    ``previous``: the memory written just before it from the same turn, if any."""
    out: list[Proposal] = []
    others = [c for c in candidates if c.memory_id != new.memory_id]
    for side, clause in causal_clauses(new.text):
        found = clause_match(clause, others, config)
        if found is None:
            continue
        known, share, shared = found
        source, target = (
            (known.memory_id, new.memory_id)
            if side == "cause"
            else (
                new.memory_id,
                known.memory_id,
            )
        )
        out.append(
            Proposal(
                source,
                target,
                "causes",
                round(0.5 + 0.4 * share, 3),
                "causal_wording",
                {"clause": " ".join(clause.split())[:200], "side": side, "shared_words": shared},
            )
        )
    if not out and previous is not None and opens_with_consequence(new.text):
        out.append(
            Proposal(
                previous.memory_id,
                new.memory_id,
                "causes",
                0.7,
                "causal_anaphora",
                {"opening": new.text.split(",")[0][:80], "previous_text": previous.text[:200]},
            )
        )
    return _unique(out)


def entity_proposals(
    new: NewMemory,
    naming: Mapping[str, Sequence[str]],
    config: RelationConfig,
) -> list[Proposal]:
    """``naming``: entity -> the earlier active memories that name it, oldest first."""
    out: list[Proposal] = []
    subject = (new.subject or "").casefold()
    for entity in new.entities:
        if entity.casefold() == subject:
            continue
        ids = [m for m in naming.get(entity, ()) if m != new.memory_id]
        if not ids or len(ids) > config.entity_max_memories:
            continue
        # rarer names say more: a name shared by two memories is a stronger link than by ten
        confidence = round(0.4 + 0.4 / len(ids), 3)
        for other in ids[-config.entity_links :]:
            out.append(
                Proposal(
                    new.memory_id,
                    other,
                    "same_entity",
                    confidence,
                    "shared_entity",
                    {"entity": entity, "memories_naming_it": len(ids)},
                )
            )
    return _unique(out)


def elaboration_proposals(new: NewMemory, candidates: Sequence[Known]) -> list[Proposal]:
    """An earlier memory of the same subject whose every content word the new one repeats,
    with at least three more: the new one elaborates it."""
    words = content_words(new.text)
    out: list[Proposal] = []
    for known in candidates:
        if known.memory_id == new.memory_id or not new.subject or known.subject != new.subject:
            continue
        old = content_words(known.text)
        if len(old) >= 3 and old <= words and len(words - old) >= 3:
            out.append(
                Proposal(
                    new.memory_id,
                    known.memory_id,
                    "elaborates",
                    round(0.5 + 0.3 * len(old) / len(words), 3),
                    "elaboration",
                    {"added_words": sorted(words - old)[:20]},
                )
            )
    return _unique(out)[:1]


def _unique(proposals: Sequence[Proposal]) -> list[Proposal]:
    best: dict[tuple[str, str, str], Proposal] = {}
    for p in proposals:
        if p.source == p.target:
            continue
        if p.key not in best or p.confidence > best[p.key].confidence:
            best[p.key] = p
    return list(best.values())


def to_prune(
    edges: Mapping[tuple[str, str, str], tuple[float, int]], config: RelationConfig
) -> list[tuple[str, str, str]]:
    """The edges to remove so the namespace keeps its bound: none until ``max_edges`` is
    passed, then the weakest (oldest first on ties) down to ``keep_edges``. ``edges``: key
    -> (confidence, order added)."""
    if len(edges) <= config.max_edges:
        return []
    ranked = sorted(edges.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[0]))
    return [key for key, _ in ranked[: len(edges) - config.keep_edges]]


# --- learning from use ------------------------------------------------------------------

#: an edge whose two memories one recall returned together gains this much confidence
COACTIVATION_GAIN = 0.05
MAX_CONFIDENCE = 0.99
#: spreading activation: the neighbours of a recall's best memories gain stability
SPREAD_FACTOR = 1.02
SPREAD_SOURCES = 3
SPREAD_PER_SOURCE = 2


def coactivated(
    ids: Sequence[str], edges: Mapping[tuple[str, str, str], tuple[float, int]]
) -> list[tuple[tuple[str, str, str], float, float]]:
    """Edges both of whose memories are in ``ids`` (one recall's answer): (key, confidence
    before, after). The namespace's edges are bounded, so a scan is cheap."""
    present = set(ids)
    return [
        (key, confidence, round(min(MAX_CONFIDENCE, confidence + COACTIVATION_GAIN), 3))
        for key, (confidence, _order) in sorted(edges.items())
        if key[0] in present and key[1] in present and confidence < MAX_CONFIDENCE
    ]


def spreading(
    ids: Sequence[str],
    relations_of: Mapping[str, Sequence[str]],
    stabilities: Mapping[str, float],
    *,
    factor: float = SPREAD_FACTOR,
    max_stability: float = 100.0,
) -> list[tuple[str, float, float, str]]:
    """The neighbours of a recall's best memories (``ids`` in rank order) that it did not
    return: (memory, stability before, after, the memory it was reached from)."""
    present = set(ids)
    out: list[tuple[str, float, float, str]] = []
    seen: set[str] = set()
    for source in ids[:SPREAD_SOURCES]:
        edges = sorted(
            edges_of(relations_of.get(source, ())), key=lambda e: (-e.confidence, e.other)
        )
        taken = 0
        for e in edges:
            if taken >= SPREAD_PER_SOURCE:
                break
            if e.other in present or e.other in seen or e.other not in stabilities:
                continue
            seen.add(e.other)
            taken += 1
            before = stabilities[e.other]
            after = round(min(max_stability, before * factor), 6)
            if after != before:
                out.append((e.other, before, after, source))
    return out


# --- fading with disuse -------------------------------------------------------------------

#: an edge neither found again nor used by a recall for this long starts to fade ...
EDGE_IDLE_DAYS = 30
#: ... halving its confidence every this many idle days ...
EDGE_HALF_LIFE_DAYS = 180
#: ... and leaves the graph below this
EDGE_FLOOR = 0.2
#: a fade is written only when it moves the confidence this much: each fade is an event
#: that rewrites both its memories in every projection (at 0.05, 3.3k of the 7.2k events the
#: daily cycles add to the realistic stream, python -m bench realistic_ingest)
EDGE_FADE_STEP = 0.1
#: history, not association: these never fade
LASTING = frozenset({"supersedes", "contradicts"})
#: the same by the rule that wrote the edge: a reply's link to the request it answers is
#: what was said (``core.replies`` pairs them however old the conversation is)
LASTING_RULES = frozenset({"reply"})


def fading(
    edges: Mapping[tuple[str, str, str], tuple[float, int]],
    used: Mapping[tuple[str, str, str], tuple[Any, float]],
    at: Any,
    rules: Mapping[tuple[str, str, str], str] | None = None,
) -> list[tuple[tuple[str, str, str], float, float | None, int]]:
    """Edges whose confidence ``at`` (event time) has faded since their last use: (key,
    current confidence, faded confidence or None to remove, idle days). ``rules``: the rule
    that wrote each edge (those in ``LASTING_RULES`` never fade)."""
    out: list[tuple[tuple[str, str, str], float, float | None, int]] = []
    for key in sorted(edges):
        if key[2] in LASTING or key not in used:
            continue
        if rules is not None and rules.get(key) in LASTING_RULES:
            continue
        since, base = used[key]
        idle = (at - since).days
        if idle < EDGE_IDLE_DAYS:
            continue
        target = round(base * 0.5 ** ((idle - EDGE_IDLE_DAYS) / EDGE_HALF_LIFE_DAYS), 3)
        current = edges[key][0]
        if target < EDGE_FLOOR:
            out.append((key, current, None, idle))
        elif current - target >= EDGE_FADE_STEP:
            out.append((key, current, target, idle))
    return out
