"""What the category tree and the namespace's event-time "now" read, kept in memory.

The tree's query (tree_queries.MEMORIES: the active memories grouped by category, subject
and entities, each group's newest use) plus its node events and "now" cost ~8 ms at 10k
memories, paid by the context call and recall after every change of the namespace. Here
each loaded namespace keeps one small entry per memory (status, times, group) and the
groups' counts and newest use, read from the tables on first use and kept current by the
projection: the changed memories of each committed batch (``apply``), its node events
(``edited``) and its access rows (``accessed``). The rows it gives are the ones the queries
give (a property test compares them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memstream.core.category_tree import NodeEdit, Placed
from memstream.projections.kept_spaces import KeptSpaces

Query = Callable[[str, list[Any]], list[dict[str, Any]]]
LastAccess = Callable[[str, Sequence[str]], dict[str, datetime | None]]
SEP = chr(31)  # as tree_queries.SEP
Group = tuple[str, str | None, str]  # category, subject, entities joined by SEP
MAX_NAMESPACES = 128

_MEMORIES = (
    "SELECT memory_id, status, category, subject, array_to_string(entities, chr(31)) AS "
    "entities, created_at, updated_at FROM memories WHERE namespace = ?"
)
_EDITS = (
    "SELECT event_id, occurred_at, type, payload->>'path' AS path FROM memory_log "
    "WHERE namespace = ? AND type IN ('TreeNodeAdded', 'TreeNodeRemoved') "
    "ORDER BY log_partition, log_offset"
)


@dataclass(frozen=True, slots=True)
class Entry:
    """What the mirror keeps of one memory (any status)."""

    status: str
    updated_at: datetime | None
    created_at: datetime
    group: Group


def entry_of(row: Mapping[str, Any]) -> Entry:
    """From a memory's fields (``entities`` a list, or already joined as the query joins)."""
    entities = row.get("entities")
    joined = entities if isinstance(entities, str) else SEP.join(entities or ())
    return Entry(
        str(row.get("status")),
        row.get("updated_at"),
        row["created_at"],
        (str(row.get("category")), row.get("subject"), joined),
    )


@dataclass
class _Space:
    entries: dict[str, Entry] = field(default_factory=dict)
    now: datetime | None = None
    now_stale: bool = False
    members: dict[Group, set[str]] = field(default_factory=dict)  # active memories per group
    last: dict[Group, datetime] = field(default_factory=dict)  # newest use per group
    stale_groups: set[Group] = field(default_factory=set)
    edits: list[NodeEdit] = field(default_factory=list)
    edit_ids: set[str] = field(default_factory=set)


class MemoryMirror:
    def __init__(self, query: Query, last_access: LastAccess) -> None:
        self.query = query
        self.last_access = last_access
        self._lock = threading.Lock()
        self._spaces: KeptSpaces[_Space] = KeptSpaces(MAX_NAMESPACES)

    # --- reads --------------------------------------------------------------------------

    def now(self, namespace: str) -> datetime | None:
        """``max(updated_at)`` of the namespace's memories, any status (hot_queries.NOW)."""
        with self._lock:
            return self._now(self._loaded(namespace))

    def tree_inputs(self, namespace: str) -> tuple[list[Placed], list[NodeEdit], datetime | None]:
        """What ``tree_queries.load_tree`` reads: the groups, the node events, now."""
        with self._lock:
            space = self._loaded(namespace)
            if space.stale_groups:
                self._refresh(namespace, space, space.stale_groups)
                space.stale_groups = set()
            placed = [
                Placed(
                    category=group[0],
                    subject=group[1],
                    entities=tuple(group[2].split(SEP)) if group[2] else (),
                    last_use=space.last[group].astimezone(UTC),
                    alike=len(ids),
                )
                for group, ids in space.members.items()
            ]
            return placed, list(space.edits), self._now(space)

    def loaded(self, namespace: str) -> bool:
        """Whether the namespace is kept (others read the tables when first asked)."""
        return namespace in self._spaces

    # --- upkeep -------------------------------------------------------------------------

    def apply(self, changed: Iterable[tuple[str, str, Entry | None]]) -> None:
        """A committed batch's changed memories (namespace, id, entry; None when gone).
        Setting an entry twice changes nothing (a namespace loaded while it committed)."""
        with self._lock:
            for ns, mid, entry in changed:
                space = self._spaces.get(ns)
                if space is not None:
                    self._set(ns, space, mid, entry)

    def edited(self, events: Iterable[tuple[str, str, NodeEdit]]) -> None:
        """A committed batch's node events (namespace, event id, edit), in log order."""
        with self._lock:
            for ns, event_id, edit in events:
                space = self._spaces.get(ns)
                if space is not None and event_id not in space.edit_ids:
                    space.edit_ids.add(event_id)
                    space.edits.append(edit)

    def accessed(self, hits: Iterable[Mapping[str, Any]]) -> None:
        """A committed batch's access rows (namespace, memory_id, occurred_at)."""
        with self._lock:
            for hit in hits:
                space = self._spaces.get(hit["namespace"])
                if space is None:
                    continue
                entry = space.entries.get(hit["memory_id"])
                at = hit["occurred_at"]
                if entry is not None and entry.status == "active" and at is not None:
                    group = entry.group
                    if at > space.last[group]:
                        space.last[group] = at

    # --- internals ----------------------------------------------------------------------

    def _loaded(self, namespace: str) -> _Space:
        return self._spaces.loaded(namespace, lambda: self._build(namespace))

    def _build(self, namespace: str) -> _Space:
        space = _Space()
        for row in self.query(_MEMORIES, [namespace]):
            entry = entry_of(row)
            space.entries[str(row["memory_id"])] = entry
            if entry.status == "active":
                space.members.setdefault(entry.group, set()).add(str(row["memory_id"]))
        space.now = max(
            (e.updated_at for e in space.entries.values() if e.updated_at is not None),
            default=None,
        )
        self._refresh(namespace, space, set(space.members))
        for row in self.query(_EDITS, [namespace]):
            space.edit_ids.add(str(row["event_id"]))
            space.edits.append(
                NodeEdit(str(row["path"]), row["type"] == "TreeNodeAdded", row["occurred_at"])
            )
        return space

    def _refresh(self, namespace: str, space: _Space, groups: Iterable[Group]) -> None:
        """Each group's newest use from its members: creation or latest access."""
        groups = [g for g in groups if g in space.members]
        ids = [mid for g in groups for mid in space.members[g]]
        accessed = self.last_access(namespace, ids)
        for group in groups:
            space.last[group] = max(
                _use(space.entries[mid].created_at, accessed.get(mid))
                for mid in space.members[group]
            )

    def _now(self, space: _Space) -> datetime | None:
        if space.now_stale:
            space.now = max(
                (e.updated_at for e in space.entries.values() if e.updated_at is not None),
                default=None,
            )
            space.now_stale = False
        return space.now

    def _set(self, namespace: str, space: _Space, mid: str, entry: Entry | None) -> None:
        old = space.entries.pop(mid, None)
        accessed = self.last_access(namespace, [mid]).get(mid)
        new_use = None
        if entry is not None:
            space.entries[mid] = entry
            if entry.status == "active":
                new_use = _use(entry.created_at, accessed)
        if old is not None and old.status == "active":
            ids = space.members[old.group]
            ids.discard(mid)
            kept = (
                new_use is not None
                and entry is not None
                and entry.group == old.group
                and new_use >= _use(old.created_at, accessed)
            )
            if not ids:
                del space.members[old.group]
                space.last.pop(old.group, None)
                space.stale_groups.discard(old.group)
            elif not kept and _use(old.created_at, accessed) >= space.last[old.group]:
                space.stale_groups.add(old.group)  # it held the newest use
        if entry is not None and new_use is not None:
            ids = space.members.setdefault(entry.group, set())
            ids.add(mid)
            if len(ids) == 1 or new_use > space.last[entry.group]:
                space.last[entry.group] = new_use
        # now: a max kept exactly; it may only go down when the memory holding it changed
        at = entry.updated_at if entry is not None else None
        if at is not None and (space.now is None or at >= space.now):
            space.now = at
        elif old is not None and old.updated_at is not None and old.updated_at == space.now:
            space.now_stale = True


def _use(created: datetime, accessed: datetime | None) -> datetime:
    """``greatest(created_at, coalesce(last_access, created_at))``."""
    return created if accessed is None or accessed < created else accessed
