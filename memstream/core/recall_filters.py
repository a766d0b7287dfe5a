"""Filters a recall is asked with (SDK ``filters=``, HTTP ``"filters"``, the ``filters`` of a
RecallRequested on the bus): which categories and tiers may answer.

``parse(mapping) -> RecallFilters``: ``category``/``categories`` and ``tier``/``tiers``, a
name or a list of names; anything else is an error naming the field, never ignored (a
filter that silently did nothing returned what the caller had excluded).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args

from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import Category, Tier

CATEGORIES = frozenset(get_args(Category))
TIERS = frozenset(get_args(Tier))
_FIELDS = {"category": "categories", "categories": "categories", "tier": "tiers", "tiers": "tiers"}


@dataclass(frozen=True, slots=True)
class RecallFilters:
    categories: frozenset[str] | None = None
    tiers: frozenset[str] | None = None

    def allows(self, category: str, tier: str) -> bool:
        return (self.categories is None or category in self.categories) and (
            self.tiers is None or tier in self.tiers
        )

    @property
    def empty(self) -> bool:
        return self.categories is None and self.tiers is None

    def as_dict(self) -> dict[str, list[str]]:
        out = {}
        if self.categories is not None:
            out["categories"] = sorted(self.categories)
        if self.tiers is not None:
            out["tiers"] = sorted(self.tiers)
        return out


def parse(filters: Mapping[str, Any] | None) -> RecallFilters:
    found: dict[str, frozenset[str]] = {}
    for key, value in (filters or {}).items():
        target = _FIELDS.get(key)
        if target is None:
            raise EventValidationError(
                "unknown_field",
                f"a recall filter: one of {', '.join(sorted(_FIELDS))}",
                f"filters.{key}",
            )
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
    return RecallFilters(found.get("categories"), found.get("tiers"))
