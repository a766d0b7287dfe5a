"""The category tree: its bounds hold for any memories and node events, the same inputs give
the same tree in any order, and every memory is shown under a kept node or none."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.category_tree import (
    CategoryTree,
    NodeEdit,
    Placed,
    TreeConfig,
    build_tree,
    normalize_path,
    prefixes,
    under,
)
from memstream.core.context_block import assemble
from memstream.core.hot_memory import HotConfig, build_hot

T0 = datetime(2024, 1, 1, tzinfo=UTC)
CATEGORIES = ["fact", "preference", "correction", "decision", "principle", "commitment", "moment"]
NAMES = st.one_of(
    st.sampled_from(["Rosa", "Budget Tracker", "Valencia", "Marcus", "acme", "work"]),
    st.text(min_size=1, max_size=20),
)
segments = st.from_regex(r"[a-z0-9][a-z0-9-]{0,45}", fullmatch=True)


@st.composite
def memories(draw: st.DrawFn) -> list[Placed]:
    return [
        Placed(
            category=draw(st.sampled_from(CATEGORIES)),
            subject=draw(st.one_of(st.none(), NAMES)),
            entities=tuple(draw(st.lists(NAMES, max_size=4))),
            last_use=T0 + timedelta(days=draw(st.integers(0, 400))),
        )
        for _ in range(draw(st.integers(0, 120)))
    ]


@st.composite
def edits(draw: st.DrawFn) -> list[NodeEdit]:
    out = []
    for _ in range(draw(st.integers(0, 40))):
        parts = draw(st.lists(segments, min_size=1, max_size=6))
        try:
            path = normalize_path("/".join(parts), max_depth=6)
        except ValueError:
            continue
        out.append(
            NodeEdit(
                path=path,
                added=draw(st.booleans()),
                at=T0 + timedelta(days=draw(st.integers(0, 400))),
            )
        )
    return out


def check_bounds(tree: CategoryTree, config: TreeConfig) -> None:
    paths = [n.path for n in tree.nodes]
    assert len(paths) == len(set(paths))
    assert len(paths) <= config.max_nodes
    assert all(n.depth <= config.max_depth for n in tree.nodes)
    children: dict[str, int] = {}
    for p in paths:
        parent = p.rsplit("/", 1)[0] if "/" in p else ""
        children[parent] = children.get(parent, 0) + 1
        assert all(a in paths for a in prefixes(p)), "every node's ancestors are kept"
    assert max(children.values(), default=0) <= config.max_children
    assert len(tree.render().encode()) <= config.max_bytes
    if tree.now is not None:
        cut = tree.now - timedelta(days=config.idle_days)
        assert all(n.last_use is None or n.last_use >= cut for n in tree.nodes)


@settings(max_examples=80, deadline=None)
@given(memories(), edits(), st.integers(0, 500))
def test_bounds_hold_for_any_input(ms: list[Placed], es: list[NodeEdit], day: int) -> None:
    config = TreeConfig()
    now = T0 + timedelta(days=day)
    tree = build_tree("ns", ms, es, now, config)
    check_bounds(tree, config)
    assert tree.placed + tree.unplaced == len(ms)
    for m in ms[:50]:
        path = tree.place(m.category, m.subject, m.entities)
        assert path is None or path in tree.paths


@settings(max_examples=60, deadline=None)
@given(memories(), edits(), st.integers(1, 12), st.integers(1, 3), st.integers(1, 4))
def test_tighter_bounds_hold(
    ms: list[Placed], es: list[NodeEdit], nodes: int, children: int, depth: int
) -> None:
    config = TreeConfig(max_nodes=nodes, max_children=children, max_depth=depth, max_bytes=120)
    check_bounds(build_tree("ns", ms, es, None, config), config)


@settings(max_examples=60, deadline=None)
@given(memories(), edits(), st.integers(0, 500), st.randoms(use_true_random=False))
def test_same_inputs_same_tree(
    ms: list[Placed], es: list[NodeEdit], day: int, rnd: random.Random
) -> None:
    now = T0 + timedelta(days=day)
    a = build_tree("ns", ms, es, now)
    shuffled = list(ms)
    rnd.shuffle(shuffled)  # memories in any order (node events keep theirs: the log's)
    b = build_tree("ns", shuffled, es, now)
    assert a.as_dict() == b.as_dict()
    assert a.render() == b.render()


@settings(max_examples=60, deadline=None)
@given(memories(), st.integers(0, 500))
def test_filter_prefix_is_closed_under_descent(ms: list[Placed], day: int) -> None:
    tree = build_tree("ns", ms, [], T0 + timedelta(days=day))
    for node in tree.nodes[:5]:
        inside = [m for m in ms if under(tree.place(m.category, m.subject, m.entities), node.path)]
        assert len(inside) == node.count


@settings(max_examples=60, deadline=None)
@given(memories(), st.integers(1, 300))
def test_the_context_block_keeps_the_tree_within_the_budget(ms: list[Placed], budget: int) -> None:
    tree = build_tree("ns", ms, [], None)
    hot = build_hot("ns", [], None, HotConfig(), None)
    block = assemble(hot, [], budget, None, tree.render())
    rendered = tree.render().splitlines(keepends=True)
    assert block.tree == rendered[: len(block.tree)], "cut from the last line"
    if block.tree:
        assert len(block.text) <= budget * 4 and "## Category tree" in block.text
