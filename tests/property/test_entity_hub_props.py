"""The entity hub's grouping: every name in exactly one entity, lookups by any alias agree,
ambiguous short names stay apart, and the result does not depend on input order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.entity_hub import alias_groups, members

NAMES = ["Mel", "Melanie", "Melvin", "Tom", "Tom Hanks", "Acme", "Acme Corp", "Porto", "Po"]
counts_st = st.dictionaries(st.sampled_from(NAMES), st.integers(1, 9), max_size=len(NAMES))


@given(counts_st)
def test_every_name_in_exactly_one_entity(counts: dict[str, int]) -> None:
    groups = alias_groups(counts)
    flat = [n for g in groups.values() for n in g]
    assert sorted(flat) == sorted(counts)
    for canonical, group in groups.items():
        assert group[0] == canonical
        for name in group:
            assert members(name, counts) == group
            assert members(name.upper(), counts) == group


@given(counts_st)
def test_grouping_does_not_depend_on_order(counts: dict[str, int]) -> None:
    assert alias_groups(dict(reversed(list(counts.items())))) == alias_groups(counts)


def test_aliases_and_ambiguity() -> None:
    assert members("Tom", {"Tom": 2, "Tom Hanks": 5}) == ["Tom Hanks", "Tom"]
    # "Mel" fits both Melanie and Melvin: not guessed
    assert members("Mel", {"Mel": 1, "Melanie": 3, "Melvin": 2}) == ["Mel"]
    assert members("Mel", {"Mel": 4, "Melanie": 3}) == ["Mel", "Melanie"]  # most mentioned
    assert members("Po", {"Po": 1, "Porto": 1}) == ["Po"]  # too short to be an alias
    assert members("Nobody", {"Porto": 1}) == ["Nobody"]
