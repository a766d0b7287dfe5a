"""Relation graph invariants over arbitrary conversations: detection never raises, edges
join known memories of the namespace and never a memory to itself, the bound holds after
every flush, every edge sits on both of its memories, and a fold of the log rebuilds the
same states and edges; the walk never returns a memory twice or one it may not answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.embedding import HashingEmbedder
from memstream.core.graph_walk import walk
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.relations import RelationConfig, causal_clauses, edges_of, parse
from tests.planning import planned

T0 = datetime(2024, 1, 1, tzinfo=UTC)
PIECES = [
    "I started training for the marathon",
    "my knee hurts because of the marathon training",
    "that's why I skipped the dinner",
    "Lena moved to Toronto",
    "I had coffee with Lena in Toronto",
    "the training led to a knee injury",
    "I sprained my ankle, so I stayed home",
    "I prefer tea over coffee",
    "I now prefer coffee",
    "we adopted a cat called Pixel",
    "Pixel likes the window",
]
sentence = st.lists(st.sampled_from(PIECES), min_size=1, max_size=2).map(
    lambda p: ". ".join(p) + "."
)


@settings(max_examples=40, deadline=None)
@given(st.lists(sentence, min_size=1, max_size=8), st.integers(2, 6))
def test_edges_stay_consistent_bounded_and_rebuildable(texts: list[str], bound: int) -> None:
    config = RelationConfig(max_edges=bound, keep_edges=max(1, bound - 1))

    def bounded(memory: NamespaceMemory) -> None:
        assert len(memory.edges) <= config.max_edges

    memory, log = planned(
        texts, step=timedelta(hours=1), sessions=2, relations=config, after=bounded
    )
    for (source, target, relation), (confidence, _order) in memory.edges.items():
        assert source != target and source in memory.states and target in memory.states
        assert 0.0 <= confidence <= 1.0
        out = [
            e
            for e in edges_of(memory.states[source].relations)
            if e.other == target and e.relation == relation
        ]
        back = [
            e
            for e in edges_of(memory.states[target].relations)
            if e.other == source and e.relation == relation
        ]
        assert [e.direction for e in out] == ["out"] and [e.direction for e in back] == ["in"]
    held = sum(len(s.relations) for s in memory.states.values())
    assert held == 2 * len(memory.edges)
    rebuilt = NamespaceMemory("ns", HashingEmbedder())
    for env in log:
        rebuilt.apply(env)
    assert rebuilt.states == memory.states and rebuilt.edges == memory.edges
    if memory.states:
        start = sorted(memory.states)[0]
        reached = walk(
            [start],
            frozenset({"causes", "same_entity", "supersedes", "contradicts", "elaborates"}),
            3,
            lambda ids: {i: memory.states[i].relations for i in ids if i in memory.states},
            lambda m: memory.states[m].active,
        )
        ids = [r.memory_id for r in reached]
        assert len(ids) == len(set(ids)) and start not in ids
        assert all(memory.states[m].active for m in ids)


@given(st.text(max_size=300))
def test_clauses_and_entries_never_raise(text: str) -> None:
    for side, clause in causal_clauses(text):
        assert side in ("cause", "effect") and clause in text
    entry = f"causes>m1 {0.5:.3f}"
    assert parse(entry).other == "m1"
