"""Filters a recall is asked with (SDK ``filters=``, HTTP ``"filters"``, the ``filters`` of a
RecallRequested on the bus): which categories and tiers may answer, and under which node of
the category tree.

``parse(mapping) -> RecallFilters``: ``category``/``categories`` and ``tier``/``tiers``, a
name or a list of names; ``tree``, a path whose node and everything below it may answer
(``work/projects``; a node the namespace's tree does not have is an error, in the recall
service, which knows the tree); anything else is an error naming the field, never ignored (a
filter that silently did nothing returned what the caller had excluded).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args

from memstream.core.category_tree import normalize_path
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import Category, Tier

CATEGORIES = frozenset(get_args(Category))
TIERS = frozenset(get_args(Tier))
_FIELDS = {
    "category": "categories",
    "categories": "categories",
    "tier": "tiers",
    "tiers": "tiers",
    "tree": "tree",
}


@dataclass(frozen=True, slots=True)
class RecallFilters:
    categories: frozenset[str] | None = None
    tiers: frozenset[str] | None = None
    tree: str | None = None  # a normalised category tree path: it and below

    def allows(self, category: str, tier: str) -> bool:
        return (self.categories is None or category in self.categories) and (
            self.tiers is None or tier in self.tiers
        )

    @property
    def empty(self) -> bool:
        return self.categories is None and self.tiers is None and self.tree is None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.categories is not None:
            out["categories"] = sorted(self.categories)
        if self.tiers is not None:
            out["tiers"] = sorted(self.tiers)
        if self.tree is not None:
            out["tree"] = self.tree
        return out


def parse(filters: Mapping[str, Any] | None) -> RecallFilters:
    found: dict[str, frozenset[str]] = {}
    tree: str | None = None
    for key, value in (filters or {}).items():
        target = _FIELDS.get(key)
        if target is None:
            raise EventValidationError(
                "unknown_field",
                f"a recall filter: one of {', '.join(sorted(_FIELDS))}",
                f"filters.{key}",
            )
        if target == "tree":
            if not isinstance(value, str):
                raise EventValidationError(
                    "wrong_type", "a category tree path such as work/projects", "filters.tree"
                )
            try:
                tree = normalize_path(value)
            except ValueError as e:
                raise EventValidationError("bad_value", str(e), "filters.tree") from None
            continue
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list | tuple) or not names:
            raise EventValidationError("wrong_type", "a name or a list of names", f"filters.{key}")
        known = CATEGORIES if target == "categories" else TIERS
        for name in names:
            if name not in known:
                raise EventValidationError(
                    "out_of_range", f"one of {', '.join(sorted(known))}", f"filters.{key}"
                )
        found[target] = found.get(target, frozenset()) | frozenset(names)
    return RecallFilters(found.get("categories"), found.get("tiers"), tree)
