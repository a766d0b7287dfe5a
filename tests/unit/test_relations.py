"""Relation detection rules, the edge encoding on a memory, the namespace bound and the
graph walk (core/relations.py, core/relation_plan.py, core/graph_walk.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstream.core.embedding import HashingEmbedder
from memstream.core.graph_walk import Hop, Reached, links_between, placed, walk
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.relations import (
    Edge,
    Known,
    NewMemory,
    RelationConfig,
    causal_clauses,
    causal_proposals,
    elaboration_proposals,
    entity_proposals,
    opens_with_consequence,
    parse,
    to_prune,
    updated,
)
from tests.planning import planned

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
CONFIG = RelationConfig()


def test_causal_clauses_name_each_side() -> None:
    assert causal_clauses("Sam's knee hurts because of the marathon training") == [
        ("cause", " the marathon training"),
        ("effect", "Sam's knee hurts "),
    ]
    sides = dict(causal_clauses("The long training block led to a knee injury"))
    assert sides["cause"].strip() == "The long training block"
    assert sides["effect"].strip() == "a knee injury"
    assert causal_clauses("It rained, so we stayed in") == [
        ("cause", "It rained"),
        ("effect", " we stayed in"),
    ]
    # "so" as an intensifier is not a consequence
    assert causal_clauses("The cake was so good") == []
    assert opens_with_consequence("That's why Sam skipped the dinner")
    assert not opens_with_consequence("Sam skipped the dinner")


def test_a_cause_clause_names_an_earlier_memory() -> None:
    new = NewMemory("m2", "Sam's knee hurts because of the marathon training", "sam", ("Sam",))
    earlier = [
        Known("m1", "Sam started training for the Berlin marathon in March", "sam"),
        Known("m3", "Sam bought a new bike", "sam"),
    ]
    [p] = causal_proposals(new, earlier, None, CONFIG)
    assert (p.source, p.target, p.relation, p.rule) == ("m1", "m2", "causes", "causal_wording")
    assert p.evidence["side"] == "cause" and 0.5 < p.confidence <= 0.9


def test_a_clause_with_too_few_shared_words_links_nothing() -> None:
    new = NewMemory("m2", "Sam was late because of the rain", "sam", ())
    earlier = [Known("m1", "Sam likes the rain in autumn forests", "sam")]  # one shared word
    assert causal_proposals(new, earlier, None, CONFIG) == []


def test_that_is_why_links_to_what_was_said_just_before() -> None:
    new = NewMemory("m2", "That's why Sam skipped the team dinner", "sam", ())
    before = Known("m1", "Sam sprained an ankle", "sam")
    [p] = causal_proposals(new, [], before, CONFIG)
    assert (p.source, p.target, p.rule) == ("m1", "m2", "causal_anaphora")
    assert (
        causal_proposals(NewMemory("m2", "Sam skipped dinner", "sam", ()), [], before, CONFIG) == []
    )


def test_shared_entities_link_rare_names_only() -> None:
    new = NewMemory("n", "Sam met Lena in Toronto", "sam", ("Sam", "Lena", "Toronto"))
    naming = {"Sam": [f"s{i}" for i in range(50)], "Lena": ["a", "b", "c"], "Toronto": []}
    out = entity_proposals(new, naming, CONFIG)
    # the subject is on every memory: no edge; Lena links to her two latest memories
    assert sorted((p.target, p.relation) for p in out) == [
        ("b", "same_entity"),
        ("c", "same_entity"),
    ]
    crowded = {"Lena": [f"l{i}" for i in range(CONFIG.entity_max_memories + 1)]}
    assert entity_proposals(new, crowded, CONFIG) == []


def test_elaboration_needs_everything_the_old_one_said_and_more() -> None:
    old = Known("o", "Sam plays the cello", "sam")
    more = NewMemory("n", "Sam plays the cello in a string quartet every Thursday", "sam", ())
    [p] = elaboration_proposals(more, [old])
    assert (p.source, p.target, p.relation) == ("n", "o", "elaborates")
    other = NewMemory("n", "Sam plays the violin in a string quartet every Thursday", "sam", ())
    assert elaboration_proposals(other, [old]) == []


def test_edges_are_kept_on_both_memories_and_removed_from_both() -> None:
    out = updated((), "a", "a", "b", "causes", 0.8)
    back = updated((), "b", "a", "b", "causes", 0.8)
    assert [parse(e) for e in out] == [Edge("causes", "out", "b", 0.8)]
    assert [parse(e) for e in back] == [Edge("causes", "in", "a", 0.8)]
    stronger = updated(out, "a", "a", "b", "causes", 0.9)
    assert [parse(e).confidence for e in stronger] == [0.9]
    assert updated(stronger, "a", "a", "b", "causes", None) == ()


def test_the_namespace_bound_prunes_the_weakest_oldest_first() -> None:
    config = RelationConfig(max_edges=4, keep_edges=2)
    edges = {("a", str(i), "same_entity"): (0.5, i) for i in range(4)}
    assert to_prune(edges, config) == []
    edges[("a", "x", "causes")] = (0.9, 4)
    assert to_prune(edges, config) == [
        ("a", "0", "same_entity"),
        ("a", "1", "same_entity"),
        ("a", "2", "same_entity"),
    ]
    with pytest.raises(ValueError):
        RelationConfig(max_edges=2, keep_edges=3)


def _plan(texts: list[str], config: RelationConfig = CONFIG) -> tuple[NamespaceMemory, list]:  # type: ignore[type-arg]
    return planned(texts, relations=config)


def test_the_plan_writes_edges_that_a_fold_of_its_log_rebuilds() -> None:
    memory, log = _plan(
        [
            "I started training for the Berlin marathon in March.",
            "My knee has been hurting because of the marathon training.",
            "I sprained my ankle, that's why I skipped the team dinner.",
        ]
    )
    added = [e.payload for e in log if e.type == "RelationAdded"]
    assert {(p.relation, p.rule) for p in added} >= {
        ("causes", "causal_wording"),
        ("causes", "causal_anaphora"),
    }
    for p in added:  # every edge names the decision that implied it
        assert p.memory_id in memory.states and p.target_id in memory.states
    rebuilt = NamespaceMemory("ns", HashingEmbedder())
    for env in log:
        rebuilt.apply(env)
    assert rebuilt.states == memory.states and rebuilt.edges == memory.edges


def test_the_plan_keeps_the_bound_with_removal_events() -> None:
    config = RelationConfig(max_edges=2, keep_edges=1, entity_max_memories=50)
    texts = [
        f"Sam had coffee with Lena at the {place} cafe."
        for place in ("harbour", "station", "museum", "park", "market")
    ]
    memory, log = _plan(texts, config)
    removed = [e.payload for e in log if e.type == "RelationRemoved"]
    assert removed and all(p.reason == "pruned" for p in removed)
    assert len(memory.edges) <= config.max_edges


def test_the_walk_follows_causes_both_ways_and_places_after_the_anchor() -> None:
    rel = {
        "effect": ("causes<cause 0.900",),
        "cause": ("causes>effect 0.900", "causes<root 0.600"),
        "root": ("causes>cause 0.600",),
        "other": (),
    }
    reached = walk(
        ["effect"],
        frozenset({"causes"}),
        2,
        lambda ids: {i: rel.get(i, ()) for i in ids},
        lambda _m: True,
    )
    assert [(r.memory_id, len(r.path)) for r in reached] == [("cause", 1), ("root", 2)]
    assert reached[0].path == (Hop("cause", "causes", "effect", 0.9),)
    answer = placed([("effect", 1.0), ("other", 0.8)], reached, k=3)
    assert [mid for mid, _s, _via in answer] == ["effect", "cause", "root"]
    assert answer[1][1] == pytest.approx(0.81)
    # a memory recall already answered stays where it was; what hangs from it follows it
    again = placed([("effect", 1.0), ("other", 0.9), ("cause", 0.5)], reached, 4)
    assert [m for m, _s, _v in again] == ["effect", "other", "cause", "root"]
    assert links_between(["effect", "cause"], rel) == {
        "effect": [{"relation": "causes", "direction": "in", "other": "cause", "confidence": 0.9}],
        "cause": [{"relation": "causes", "direction": "out", "other": "effect", "confidence": 0.9}],
    }


def test_the_walk_skips_what_may_not_be_answered() -> None:
    rel = {"a": ("causes<b 0.900",), "b": ("causes>a 0.900",)}
    assert (
        walk(
            ["a"],
            frozenset({"causes"}),
            2,
            lambda ids: {i: rel[i] for i in ids if i in rel},
            lambda m: m != "b",
        )
        == []
    )
    assert isinstance(Reached("a", "a", (), 1.0).weight, float)


def test_an_edge_answered_together_grows_more_confident_up_to_a_ceiling() -> None:
    from memstream.core.relations import MAX_CONFIDENCE, coactivated

    edges = {("a", "b", "causes"): (0.8, 0), ("a", "c", "same_entity"): (0.98, 1)}
    assert coactivated(["a", "b"], edges) == [(("a", "b", "causes"), 0.8, 0.85)]
    assert coactivated(["a", "c"], edges) == [(("a", "c", "same_entity"), 0.98, MAX_CONFIDENCE)]
    assert coactivated(["b", "c"], edges) == []


def test_spreading_strengthens_the_best_results_neighbours_it_did_not_return() -> None:
    from memstream.core.relations import spreading

    rel = {"a": ("causes<x 0.900", "same_entity>b 0.500", "same_entity>y 0.400")}
    out = spreading(["a", "b"], rel, {"x": 2.0, "y": 1.0})
    assert out == [("x", 2.0, 2.04, "a"), ("y", 1.0, 1.02, "a")]
    assert spreading(["a"], rel, {"x": 100.0}, max_stability=100.0) == []


def test_edges_fade_with_disuse_and_leave_below_the_floor() -> None:
    from memstream.core.relations import EDGE_FLOOR, EDGE_HALF_LIFE_DAYS, EDGE_IDLE_DAYS, fading

    key, lasting = ("a", "b", "same_entity"), ("a", "c", "supersedes")
    edges = {key: (0.8, 0), lasting: (1.0, 1)}
    used = {key: (T0, 0.8), lasting: (T0, 1.0)}
    assert fading(edges, used, T0 + timedelta(days=EDGE_IDLE_DAYS - 1)) == []
    half = T0 + timedelta(days=EDGE_IDLE_DAYS + EDGE_HALF_LIFE_DAYS)
    assert fading(edges, used, half) == [(key, 0.8, 0.4, EDGE_IDLE_DAYS + EDGE_HALF_LIFE_DAYS)]
    # once written, the faded confidence is the current one: no repeat until it moves again
    assert fading({**edges, key: (0.4, 0)}, used, half + timedelta(days=1)) == []
    gone = fading(edges, used, T0 + timedelta(days=EDGE_IDLE_DAYS + 3 * EDGE_HALF_LIFE_DAYS))
    assert gone[0][2] is None and EDGE_FLOOR > 0.8 * 0.125  # removed; supersedes never fades
    assert all(k != lasting for k, *_ in gone)


def test_a_reply_link_never_fades_other_related_edges_do() -> None:
    """A reply's link to the request it answers is what was said, not an association."""
    from memstream.core.relations import EDGE_HALF_LIFE_DAYS, EDGE_IDLE_DAYS, fading

    reply, seen_together = ("r", "q", "related_to"), ("a", "b", "related_to")
    edges = {reply: (0.7, 0), seen_together: (0.7, 1)}
    used = {reply: (T0, 0.7), seen_together: (T0, 0.7)}
    rules = {reply: "reply", seen_together: "coactivation"}
    years = T0 + timedelta(days=EDGE_IDLE_DAYS + 3 * EDGE_HALF_LIFE_DAYS)
    assert [k for k, *_ in fading(edges, used, years, rules)] == [seen_together]
    assert [k for k, *_ in fading(edges, used, years)] == [seen_together, reply]  # no rules
