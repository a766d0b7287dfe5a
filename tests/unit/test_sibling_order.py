"""Memories of one turn in the order their own words answer (core/sibling_order.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.sibling_order import by_own_words, own_match
from memstream.core.tokens import tokenize


def test_the_memory_that_says_it_stands_first_for_its_turn() -> None:
    asked = tokenize("When did Kim start the job?", stem=True)
    name = own_match(asked, tokenize("Kim's name is Kim", stem=True), 0.7)
    job = own_match(asked, tokenize("Kim just started a new job at Helios Bank", stem=True), 0.5)
    assert job > name  # three of the question's words against one
    ids = ["name", "other", "job"]
    sources = {"name": ("t1",), "other": ("t2",), "job": ("t1",)}
    match = {"name": name, "job": job, "other": (0, 0.0)}
    assert by_own_words(ids, ids, sources, match) == ["job", "other", "name"]


def test_a_memory_alone_with_its_turns_or_without_any_keeps_its_place() -> None:
    ids = ["a", "b", "c"]
    sources = {"a": ("t1",), "b": (), "c": ("t1", "t2")}  # c's turns are not a's
    match = {"a": (0, 0.0), "b": (5, 1.0), "c": (9, 1.0)}
    assert by_own_words(ids, ids, sources, match) == ids


@given(st.lists(st.tuples(st.sampled_from("xyz"), st.integers(0, 3), st.floats(-1, 1)), max_size=9))
def test_only_the_order_inside_a_turn_changes(rows: list[tuple[str, int, float]]) -> None:
    ids = [f"m{i}" for i in range(len(rows))]
    sources = {mid: (turn,) for mid, (turn, _o, _c) in zip(ids, rows, strict=True)}
    match = {mid: (o, c) for mid, (_t, o, c) in zip(ids, rows, strict=True)}
    out = by_own_words(ids, ids, sources, match)
    assert sorted(out) == sorted(ids)
    # every position holds a memory of the same turn as before: the turns' ranks stay
    assert [sources[m] for m in out] == [sources[m] for m in ids]
    for turn in "xyz":
        mine = [m for m in out if sources[m] == (turn,)]
        assert mine == sorted(mine, key=lambda m: (-match[m][0], -match[m][1], ids.index(m)))
