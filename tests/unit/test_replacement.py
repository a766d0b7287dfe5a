"""A change said in passing ("... instead of Dagster", "switched from Word to Scrivener"):
the replaced value, the ``supersedes`` edges to what named it, and the recall order that
puts the change first (core/replacement.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.embedding import HashingEmbedder
from memstream.core.graph_walk import Hop
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.relations import Edge, Known, NewMemory
from memstream.core.replacement import (
    RULE,
    current_first,
    newer_of,
    replaced_values,
    replacement_proposals,
    replacements,
)
from tests.planning import planned


def test_the_wordings_of_a_change_name_the_replaced_value() -> None:
    assert replaced_values("Sam decided to use Prefect instead of Dagster, the team liked it") == [
        "Dagster"
    ]
    assert replacements("Sam switched from Microsoft Word to Scrivener on May 5") == [
        ("Microsoft Word", "Scrivener")
    ]
    assert replacements("Sam replaced the gas stove with an induction hob") == [
        ("the gas stove", "an")
    ]
    assert replaced_values("Sam no longer uses Trello for the team's tasks") == ["Trello"]
    assert replaced_values("Sam loves the new balcony") == []
    # a thing given up, an activity ended
    assert replaced_values("Sam sold the Civic and bought a Tesla Model 3") == ["the Civic"]
    assert replaced_values("Sam cancelled Planet Fitness and joined a climbing gym") == [
        "Planet Fitness"
    ]
    assert replaced_values("Sam is no longer training for the half marathon, he hurt his knee") == [
        "the half marathon"
    ]
    assert replaced_values("Sam stopped going to the Tuesday choir") == ["the Tuesday choir"]
    assert replaced_values("Sam sold it last week") == []  # a pointer names no value


def _new(text: str, entities: tuple[str, ...] = ()) -> NewMemory:
    return NewMemory("new", text, "sam", entities)


def test_a_change_supersedes_the_latest_memories_naming_the_old_value_not_the_new() -> None:
    earlier = [
        Known("a", "Sam's manager wants Sam to migrate the pipelines to Dagster by June", "sam"),
        Known("b", "Sam compared Prefect and Dagster last week", "sam"),  # names both
        Known("c", "Ana likes Dagster", "ana"),  # someone else's
        Known("d", "Sam will try Dagster on the billing jobs", "sam"),
    ]
    new = _new("Sam decided to use Prefect instead of Dagster", ("Prefect", "Dagster"))
    found = replacement_proposals(new, earlier)
    assert [(p.source, p.target, p.relation, p.rule) for p in found] == [
        ("new", "a", "supersedes", RULE),
        ("new", "d", "supersedes", RULE),
    ]
    assert found[0].evidence == {"replaced": "Dagster"}


def test_a_value_without_a_name_is_matched_by_its_words_and_a_time_by_nothing() -> None:
    earlier = [
        Known("a", "Sam reads print books in the evening", "sam"),
        Known("b", "Sam reads print in the day and audiobooks at night", "sam"),
        Known("c", "Sam's standup is at 9 AM", "sam"),
    ]
    moved = replacement_proposals(
        _new("Sam switched from print to audiobooks for evening reading"), earlier
    )
    assert [p.target for p in moved] == ["a"]  # b already says the new value
    hour = _new("Sam starts work at 8 AM instead of 9 AM", ("AM",))
    assert replacement_proposals(hour, earlier) == []  # "AM" and "9" name no value


def test_a_question_about_a_change_is_no_change() -> None:
    earlier = [Known("a", "Sam writes every morning", "sam")]
    asked = _new("Sam asked: am I spending time on Notion instead of writing?")
    assert replacement_proposals(asked, earlier) == []


def test_the_plan_writes_the_edge_and_a_fold_of_its_log_rebuilds_it() -> None:
    memory, log = planned(
        [
            "My manager wants me to migrate our pipelines to Dagster by June.",
            "We decided to use Prefect instead of Dagster, the team found it easier.",
        ]
    )
    (edge,) = [e.payload for e in log if e.type == "RelationAdded" and e.payload.rule == RULE]
    assert "Dagster by June" in memory.states[edge.target_id].text
    assert "Prefect" in memory.states[edge.memory_id].text
    assert memory.states[edge.target_id].active  # the history stays
    rebuilt = NamespaceMemory("ns", HashingEmbedder())
    for env in log:
        rebuilt.apply(env)
    assert rebuilt.states == memory.states and rebuilt.edges == memory.edges


def test_recall_places_the_change_right_before_what_it_supersedes() -> None:
    relations = {"old": (Edge("supersedes", "in", "new", 0.8).entry(),)}
    ranked = [("x", 0.9), ("old", 0.8), ("y", 0.7), ("new", 0.2)]
    newer = newer_of([m for m, _ in ranked], relations)
    assert newer == {"old": [("new", 0.8)]}
    placed = current_first(ranked, newer, lambda _m: True)
    assert [(m, s) for m, s, _h in placed] == [("x", 0.9), ("new", 0.8), ("old", 0.8), ("y", 0.7)]
    assert placed[1][2] == Hop("new", "supersedes", "old", 0.8)
    # one that may not be answered (another status, outside the filters) is not placed
    kept = current_first(ranked, newer, lambda m: m != "new")
    assert [m for m, _s, _h in kept] == ["x", "old", "y", "new"]


def test_a_question_about_a_name_only_the_old_memory_says_gets_the_change_after_it() -> None:
    newer = {"old": [("new", 0.8)]}
    ranked = [("old", 0.9), ("y", 0.7)]
    placed = current_first(ranked, newer, lambda _m: True, lambda _n, _o: False)
    assert [m for m, _s, _h in placed] == ["old", "new", "y"]
    assert placed[1][2] == Hop("new", "supersedes", "old", 0.8)


_IDS = st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=8, unique=True)


@given(_IDS, st.dictionaries(st.sampled_from("abcdefgh"), st.sampled_from("abcdefghij")))
def test_current_first_keeps_every_memory_once_and_each_change_before_its_old(
    ids: list[str], supersedes: dict[str, str]
) -> None:
    ranked = [(m, 1.0 - i / 10) for i, m in enumerate(ids)]
    newer: dict[str, list[tuple[str, float]]] = {}
    for new, old in supersedes.items():
        if new > old:  # a change comes after what it changes: ids in creation order
            newer.setdefault(old, []).append((new, 0.8))
    placed = [m for m, _s, _h in current_first(ranked, newer, lambda _m: True)]
    assert len(placed) == len(set(placed)) and set(ids) <= set(placed)
    for old, news in newer.items():
        if old in ids:
            assert all(placed.index(n) < placed.index(old) for n, _c in news)


def test_quitting_and_being_moved_off_name_the_replaced_value() -> None:
    assert replaced_values("Sam quit coffee") == ["coffee"]
    assert replaced_values("Sam gave up meat for Lent") == ["meat"]
    assert replaced_values("Sam quit it") == []  # a pronoun names nothing
    assert replaced_values("Sam got moved off billing onto the search team") == ["billing"]
    found = replacement_proposals(
        _new("Sam got moved off billing onto the search team"),
        [Known("a", "Sam is working on the billing service", "sam")],
    )
    assert [(p.target, p.evidence) for p in found] == [("a", {"replaced": "billing"})]


def test_a_thing_retired_is_replaced_and_a_person_retiring_names_nothing() -> None:
    assert replaced_values("Sam got an Apple Watch, retired the Fitbit") == ["the Fitbit"]
    assert replaced_values("Sam retired in 2020") == []
