"""The category tree's rules on small cases: placement by category and entity, user nodes,
removal, the 60-day idle rule on event time, and which leaves the bounds drop first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstream.core.category_tree import (
    NodeEdit,
    Placed,
    TreeConfig,
    build_tree,
    normalize_path,
)
from memstream.core.recall_filters import parse as parse_filters
from memstream.schemas.errors import EventValidationError

T0 = datetime(2024, 5, 1, tzinfo=UTC)


def m(category: str, *entities: str, subject: str | None = None, day: int = 0) -> Placed:
    return Placed(category, subject, tuple(entities), T0 + timedelta(days=day))


def test_category_at_the_root_entity_beneath() -> None:
    tree = build_tree(
        "ns",
        [m("fact", "Rosa", "Valencia", subject="Rosa"), m("fact", "Rosa", subject="Rosa")],
        [],
        T0,
    )
    assert tree.render() == "- fact (2)\n  - rosa (1)\n  - valencia (1)\n"
    assert tree.place("fact", "Rosa", ["Rosa", "Valencia"]) == "fact/valencia"
    assert tree.place("fact", "Rosa", ["Rosa"]) == "fact/rosa"
    assert tree.place("moment", None, []) is None  # no such root


def test_user_node_takes_the_memories_of_its_entity() -> None:
    add = NodeEdit("work/projects/budget-tracker", True, T0)
    tree = build_tree("ns", [m("decision", "Budget Tracker"), m("fact", "Valencia")], [add], T0)
    assert tree.place("decision", None, ["Budget Tracker"]) == "work/projects/budget-tracker"
    assert "work/projects/budget-tracker" in tree.paths and "fact/valencia" in tree.paths
    assert [n.path for n in tree.nodes][:3] == [
        "work",
        "work/projects",
        "work/projects/budget-tracker",
    ]
    # removing it hides it (and its subtree): the memory returns to its category
    gone = build_tree(
        "ns",
        [m("decision", "Budget Tracker")],
        [add, NodeEdit("work/projects", False, T0)],
        T0,
    )
    assert gone.place("decision", None, ["Budget Tracker"]) == "decision/budget-tracker"
    assert "work/projects" not in gone.paths
    # a removed automatic node: its memories show under the parent
    hidden = build_tree("ns", [m("fact", "Valencia")], [NodeEdit("fact/valencia", False, T0)], T0)
    assert hidden.paths == {"fact"} and hidden.place("fact", None, ["Valencia"]) == "fact"


def test_idle_nodes_are_pruned_on_event_time() -> None:
    ms = [m("fact", "Valencia", day=0), m("fact", "Marcus", day=50)]
    assert build_tree("ns", ms, [], T0 + timedelta(days=60)).paths == {
        "fact",
        "fact/valencia",
        "fact/marcus",
    }
    later = build_tree("ns", ms, [], T0 + timedelta(days=61))
    assert later.paths == {"fact", "fact/marcus"}
    assert [n.path for n in later.pruned] == ["fact/valencia"]
    assert later.place("fact", None, ["Valencia"]) == "fact"
    # a user node lives 60 days from its addition
    added = [NodeEdit("reading", True, T0 + timedelta(days=30))]
    assert "reading" in build_tree("ns", ms, added, T0 + timedelta(days=90)).paths
    assert "reading" not in build_tree("ns", ms, added, T0 + timedelta(days=91)).paths


def test_bounds_drop_the_least_populated_least_recent_first() -> None:
    ms = [m("fact", f"e{i}", day=i) for i in range(12)] + [m("fact", "e0")] * 3
    tree = build_tree("ns", ms, [], T0 + timedelta(days=12))
    kids = [n.name for n in tree.nodes if n.depth == 2]
    assert len(kids) == 10
    assert kids[0] == "e0"  # four memories
    assert "e1" not in kids and "e2" not in kids  # one memory each, used longest ago
    assert {n.name for n in tree.trimmed} == {"e1", "e2"}
    small = build_tree("ns", ms, [], None, TreeConfig(max_bytes=40))
    assert len(small.render().encode()) <= 40 and small.nodes[0].path == "fact"


def test_paths_are_normalised_and_bounded() -> None:
    assert normalize_path(" Work/Projects/Budget Tracker ") == "work/projects/budget-tracker"
    with pytest.raises(ValueError, match="at most 4"):
        normalize_path("a/b/c/d/e")
    with pytest.raises(ValueError, match="at least one"):
        normalize_path("/ /")


def test_the_tree_recall_filter_is_a_normalised_path_or_an_error_naming_it() -> None:
    assert parse_filters({"tree": "Work/Projects"}).tree == "work/projects"
    assert parse_filters({"tree": "work", "tier": "core"}).as_dict() == {
        "tiers": ["core"],
        "tree": "work",
    }
    for bad in (3, "a/b/c/d/e", "/"):
        with pytest.raises(EventValidationError) as info:
            parse_filters({"tree": bad})
        assert info.value.path == "filters.tree"
