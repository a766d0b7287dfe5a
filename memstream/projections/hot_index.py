"""The hot block's candidate rows in memory, beside the ``memories`` table they come from.

``hot_queries.CANDIDATES`` costs ~25 ms at 10k memories in a namespace (nine ordered
branches over the namespace), and the context call paid it after every change. Here each
branch is a bounded top list (core/hot_sections.py) read from the table on first use and
kept current by the projection, which hands over each committed batch's changed memories
(``apply``); a list that lost a member it cannot replace is read again when next asked.
The rows returned are the rows CANDIDATES returns (a property test compares them), with
``access_count`` from the usage index.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memstream.core.hot_sections import (
    DONE_PARAM,
    SECTIONS,
    Section,
    TopList,
    high_q,
    hot_ids,
    session_section,
    update,
)
from memstream.projections.hot_queries import COLUMNS
from memstream.projections.kept_spaces import KeptSpaces

Query = Callable[[str, list[Any]], list[dict[str, Any]]]
Counts = Callable[[str, Sequence[str]], dict[str, int]]
Row = dict[str, Any]
NAMES = tuple(c.strip() for c in COLUMNS.split(","))
MAX_NAMESPACES = 128
MAX_SESSIONS = 32  # session lists kept per namespace


def row_of(values: dict[str, Any]) -> Row:
    """The columns CANDIDATES selects, from a memory's fields."""
    return {name: values.get(name) for name in NAMES}


def _sql(section: Section) -> str:
    return (
        f"SELECT {COLUMNS} FROM memories WHERE namespace = ? AND status = 'active' "
        f"AND ({section.where_sql}) ORDER BY {section.order_sql} LIMIT {section.limit}"
    )


_HIGH_Q = (
    f"SELECT {COLUMNS} FROM memories WHERE namespace = ? AND status = 'active' AND q_value >= 0.8"
)


@dataclass
class _Space:
    lists: dict[str, TopList] = field(default_factory=dict)
    sessions: OrderedDict[str, TopList] = field(default_factory=OrderedDict)
    high_q: dict[str, float] = field(default_factory=dict)
    rows: dict[str, Row] = field(default_factory=dict)  # of every member of a list or high_q


class HotIndex:
    def __init__(self, query: Query) -> None:
        self.query = query
        self._lock = threading.Lock()
        self._spaces: KeptSpaces[_Space] = KeptSpaces(MAX_NAMESPACES)

    # --- reads --------------------------------------------------------------------------

    def candidates(self, namespace: str, session_id: str | None, counts: Counts) -> list[Row]:
        """CANDIDATES' rows for the namespace and session (any order), ``access_count``
        from ``counts`` (memory id -> times returned)."""
        with self._lock:
            space = self._loaded(namespace)
            stale = [s for s in SECTIONS if space.lists[s.name].stale]
            for section in stale:
                space.lists[section.name] = self._read(namespace, section, space)
            if stale:  # rows only the old lists held
                _prune(space)
            session = self._session(namespace, session_id or "", space)
            ids: set[str] = set(session.ids())
            for top in space.lists.values():
                ids.update(top.ids())
            access = counts(namespace, [*ids, *space.high_q])
            ids.update(hot_ids(space.high_q, access))
            return [{**space.rows[mid], "access_count": access.get(mid, 0)} for mid in ids]

    def loaded(self, namespace: str) -> bool:
        """Whether the namespace is kept (others read the tables when first asked)."""
        return namespace in self._spaces

    # --- upkeep -------------------------------------------------------------------------

    def apply(self, changed: Iterable[tuple[str, str, Row | None]]) -> None:
        """A committed batch's changed memories: (namespace, memory id, its row, None when
        gone). Namespaces not loaded yet will read the table when asked; a row applied
        twice (a namespace loaded while its batch committed) changes nothing."""
        with self._lock:
            for ns, mid, row in changed:
                space = self._spaces.get(ns)
                if space is not None:
                    _set(space, mid, row)

    # --- internals ----------------------------------------------------------------------

    def _loaded(self, namespace: str) -> _Space:
        return self._spaces.loaded(namespace, lambda: self._build(namespace))

    def _build(self, namespace: str) -> _Space:
        space = _Space()
        for section in SECTIONS:
            space.lists[section.name] = self._read(namespace, section, space)
        for row in self.query(_HIGH_Q, [namespace]):
            space.high_q[str(row["memory_id"])] = float(row["q_value"])
            space.rows[str(row["memory_id"])] = row
        return space

    def _read(self, namespace: str, section: Section, space: _Space, *extra: Any) -> TopList:
        params: list[Any] = [namespace, *extra]
        if section.name == "done":
            params.append(DONE_PARAM)
        rows = self.query(_sql(section), params)
        for row in rows:
            space.rows[str(row["memory_id"])] = row
        return TopList.read(section.limit, [(section.key(r), str(r["memory_id"])) for r in rows])

    def _session(self, namespace: str, session: str, space: _Space) -> TopList:
        top = space.sessions.get(session)
        if top is None or top.stale:
            top = self._read(namespace, session_section(session), space, session)
            if len(space.sessions) >= MAX_SESSIONS and session not in space.sessions:
                space.sessions.popitem(last=False)
        space.sessions[session] = top
        space.sessions.move_to_end(session)
        return top


def _set(space: _Space, mid: str, row: Row | None) -> None:
    active = row is not None and row.get("status") == "active"
    for section in SECTIONS:
        key = section.key(row) if active and section.admits(row) else None  # type: ignore[arg-type]
        update(space.lists[section.name], mid, key)
    for session, top in space.sessions.items():
        section = session_section(session)
        key = section.key(row) if active and section.admits(row) else None  # type: ignore[arg-type]
        update(top, mid, key)
    if active and high_q(row):  # type: ignore[arg-type]
        space.high_q[mid] = float(row["q_value"])  # type: ignore[index]
    else:
        space.high_q.pop(mid, None)
    member = mid in space.high_q or any(
        mid in top.keys for top in (*space.lists.values(), *space.sessions.values())
    )
    if member and row is not None:
        space.rows[mid] = row
    else:
        space.rows.pop(mid, None)


def _prune(space: _Space) -> None:
    keep = set(space.high_q)
    for top in (*space.lists.values(), *space.sessions.values()):
        keep.update(top.keys)
    for mid in [m for m in space.rows if m not in keep]:
        del space.rows[mid]
