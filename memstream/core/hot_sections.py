"""The hot block's candidate sections (projections/hot_queries.CANDIDATES) as Python
predicates and sort keys, and the bounded top lists kept current from changed rows.

CANDIDATES reads, per section, the first N active memories by an order: the newest
slot holders, the most important lessons, the newest tasks, ... Recomputing those after
every change costs a full query (~25 ms at 10k memories); kept as sorted top lists and
updated from each changed memory, a change costs a few comparisons. Each section here
says exactly what its SQL says (NULL handling, DuckDB's NULLS LAST, RE2's ASCII word
boundaries), so the rows a list holds are the rows the query returns (a property test
compares them against DuckDB). Pure: no I/O.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from memstream.core.hot_memory import _DONE, LESSON_CATEGORIES

Row = Mapping[str, Any]
Key = tuple[Any, ...]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)

# DuckDB's regexp_matches is RE2: \b is an ASCII word boundary and (?i) folds "ſ" to "s"
# but not "ı" / "İ" to "i"; Python's \b and re.I are Unicode. The same test, spelled for re.
_W = "[0-9A-Za-z_]"
_B = f"(?-i:(?:(?<!{_W})(?={_W})|(?<={_W})(?!{_W})))"
DONE_RE2 = re.compile(_B + _DONE.pattern[2:-2].replace("i", "(?-i:[iI])") + _B, re.I)


def micros(at: datetime) -> int:
    """Event time as whole microseconds since the epoch (exact, unlike float seconds)."""
    return (at - _EPOCH) // _MICRO


def _newest(value: datetime | None) -> Key:
    """``ORDER BY value DESC`` with DuckDB's NULLS LAST."""
    return (1, 0) if value is None else (0, -micros(value))


def _largest(value: float | None) -> Key:
    return (1, 0.0) if value is None else (0, -value)


def _started(r: Row) -> datetime | None:
    return r.get("valid_from") or r.get("created_at")  # coalesce(valid_from, created_at)


def _sum(r: Row) -> float | None:
    imp, q = r.get("importance"), r.get("q_value")
    return None if imp is None or q is None else float(imp) + float(q)


@dataclass(frozen=True, slots=True)
class Section:
    """One branch of CANDIDATES: ``WHERE admits ORDER BY key LIMIT limit``."""

    name: str
    limit: int
    admits: Callable[[Row], bool]
    order: Callable[[Row], Key]
    where_sql: str  # the same test and order in SQL, for (re)reading the section
    order_sql: str

    def key(self, row: Row) -> Key:
        return (*self.order(row), str(row["memory_id"]))


def _text(r: Row) -> str | None:
    text = r.get("text")
    return None if text is None else str(text)


#: the sections kept as top lists (the hot section, which depends on access counts, and
#: the session's, which depends on the session asked about, are read separately)
SECTIONS: tuple[Section, ...] = (
    Section(
        "slots",
        100,
        lambda r: r.get("slot") is not None,
        lambda r: _newest(r.get("updated_at")),
        "slot IS NOT NULL",
        "updated_at DESC, memory_id",
    ),
    Section(
        "lessons",
        40,
        lambda r: r.get("category") in LESSON_CATEGORIES,
        lambda r: _largest(r.get("importance")),
        "category IN ('correction', 'principle', 'decision')",
        "importance DESC, memory_id",
    ),
    Section(
        "tasks",
        50,
        lambda r: r.get("category") == "commitment",
        lambda r: _newest(_started(r)),
        "category = 'commitment'",
        "coalesce(valid_from, created_at) DESC, memory_id",
    ),
    Section(
        "preferences",
        16,
        lambda r: r.get("category") == "preference",
        lambda r: _largest(_sum(r)),
        "category = 'preference'",
        "importance + q_value DESC, memory_id",
    ),
    Section(
        "recent",
        12,
        lambda r: r.get("category") is not None and r.get("category") != "summary",
        lambda r: _newest(_started(r)),
        "category <> 'summary'",
        "coalesce(valid_from, created_at) DESC, memory_id",
    ),
    Section(
        "references",
        20,
        lambda r: (r.get("metadata") or "") != "",
        lambda r: _newest(r.get("updated_at")),
        "coalesce(metadata, '') <> ''",
        "updated_at DESC, memory_id",
    ),
    Section(
        "done",
        100,
        lambda r: (t := _text(r)) is not None and DONE_RE2.search(t) is not None,
        lambda r: _newest(r.get("updated_at")),
        "regexp_matches(text, ?)",
        "updated_at DESC, memory_id",
    ),
)
DONE_PARAM = "(?i)" + _DONE.pattern  # the done section's SQL parameter, as CANDIDATES'


def session_section(session: str) -> Section:
    """``session_id = ?`` (the session asked about, "" for none, as CANDIDATES binds it)."""
    return Section(
        "session",
        30,
        lambda r: r.get("session_id") == session,
        lambda r: _newest(r.get("updated_at")),
        "session_id = ?",
        "updated_at DESC, memory_id",
    )


HOT_MIN_Q = 0.8
HOT_MIN_ACCESS = 10
HOT_LIMIT = 15


def high_q(row: Row) -> bool:
    """May be in the hot section (it also needs HOT_MIN_ACCESS uses, read at call time)."""
    q = row.get("q_value")
    return q is not None and float(q) >= HOT_MIN_Q


def hot_ids(q_values: Mapping[str, float], access: Mapping[str, int]) -> list[str]:
    """The hot section's branch: ``q_value >= 0.8 AND access_count >= 10 ORDER BY q_value
    DESC, memory_id LIMIT 15`` over the high-Q memories."""
    ids = [m for m, q in q_values.items() if q >= HOT_MIN_Q and access.get(m, 0) >= HOT_MIN_ACCESS]
    ids.sort(key=lambda m: (-q_values[m], m))
    return ids[:HOT_LIMIT]


@dataclass
class TopList:
    """A section's first ``limit`` keys (ascending), or all of its rows when ``complete``
    (fewer qualified when it was read). ``stale``: a member left and the next one is not
    known here: read the section again."""

    limit: int
    entries: list[tuple[Key, str]]
    complete: bool
    stale: bool = False
    keys: dict[str, Key] = field(default_factory=dict)

    @classmethod
    def read(cls, limit: int, keyed: list[tuple[Key, str]]) -> TopList:
        """From the section's rows as its query returned them (at most ``limit``)."""
        return cls(limit, sorted(keyed), len(keyed) < limit, keys={m: k for k, m in keyed})

    def ids(self) -> list[str]:
        return [mid for _key, mid in self.entries]


def update(top: TopList, memory_id: str, key: Key | None) -> None:
    """The list after the memory's row became one with ``key`` (None: it no longer
    qualifies, or is gone). Exact as long as the list is not stale."""
    if top.stale:
        return
    old = top.keys.get(memory_id)
    if old is not None:
        worst = top.entries[-1][0]
        del top.entries[bisect.bisect_left(top.entries, (old, memory_id))]
        del top.keys[memory_id]
        if key is None:
            # the next row outside the list would move up: unknown here unless there is none
            top.stale = not top.complete
            return
        if top.complete or key <= worst:
            _insert(top, memory_id, key)
        else:
            top.stale = True  # it fell behind rows this list does not hold
        return
    if key is None:
        return
    if top.complete or (top.entries and key < top.entries[-1][0]):
        _insert(top, memory_id, key)
        if len(top.entries) > top.limit:
            del top.keys[top.entries.pop()[1]]
            top.complete = False


def _insert(top: TopList, memory_id: str, key: Key) -> None:
    bisect.insort(top.entries, (key, memory_id))
    top.keys[memory_id] = key
