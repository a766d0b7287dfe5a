"""Recall filters (core/recall_filters.py): what a caller may limit a recall to."""

from __future__ import annotations

import pytest

from memstream.core.recall_filters import RecallFilters, parse
from memstream.schemas.errors import EventValidationError


def test_names_and_lists_of_names() -> None:
    f = parse({"category": "preference", "tiers": ["core", "working"]})
    assert f == RecallFilters(frozenset({"preference"}), frozenset({"core", "working"}))
    assert f.allows("preference", "core") and not f.allows("fact", "core")
    assert not f.allows("preference", "peripheral")
    assert parse({}).empty and parse(None).allows("fact", "peripheral")
    assert parse({"category": "fact", "categories": ["decision"]}).categories == {
        "fact",
        "decision",
    }


@pytest.mark.parametrize(
    ("filters", "path"),
    [
        ({"colour": "blue"}, "filters.colour"),
        ({"category": "gossip"}, "filters.category"),
        ({"tier": []}, "filters.tier"),
        ({"tiers": 3}, "filters.tiers"),
    ],
)
def test_anything_else_is_an_error_naming_it(filters: dict[str, object], path: str) -> None:
    with pytest.raises(EventValidationError) as info:
        parse(filters)
    assert info.value.path == path
