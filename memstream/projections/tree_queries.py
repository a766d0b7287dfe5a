"""The category tree's queries on the analytics projection, shared by ``GET /v1/tree``, the
context call, recall (the tree path of each result and the ``tree`` filter) and ``memstream
verify`` (the trees of the live and the rebuilt projection must match). The tree itself is a
pure function of these rows (core/category_tree.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Sequence
from datetime import UTC, datetime
from typing import Any

from memstream.core.category_tree import CategoryTree, NodeEdit, Placed, TreeConfig, build_tree
from memstream.projections.hot_queries import NOW

Query = Callable[[str, list[Any]], list[dict[str, Any]]]
#: a namespace's tree inputs kept in memory (projections/memory_mirror.py): groups, node
#: events, now -- what load_tree reads with its queries
Inputs = Callable[[str], tuple[list[Placed], list[NodeEdit], datetime | None]]
SEP = chr(31)  # joins a memory's entities in MEMORIES (control characters never reach one)
#: rows a tree query may read: every kind of memory of a namespace, never a truncated set
MAX_ROWS = 10_000_000


def reader(duck: Any) -> Query:
    """The projection's read-only query, as dicts, without the 10,000-row cap of ad hoc SQL."""

    def query(sql: str, params: list[Any]) -> list[dict[str, Any]]:
        columns, rows = duck.user_query(sql, MAX_ROWS, params)
        return [dict(zip(columns, row, strict=True)) for row in rows]

    return query


# Memories alike for placement are one row, so the tree costs by kinds of memory, not by
# memories; a memory's last use is its creation or its latest access (event time). Epoch
# seconds and a joined entity list: converting zoned timestamps and lists row by row cost
# more than the query.
MEMORIES = """
WITH u AS (SELECT memory_id, max(occurred_at) AS last_access FROM access_hits
           WHERE namespace = ? GROUP BY memory_id)
SELECT m.category, m.subject, array_to_string(m.entities, chr(31)) AS entities, count(*) AS n,
       epoch(max(greatest(m.created_at, coalesce(u.last_access, m.created_at)))) AS last_use
FROM memories m LEFT JOIN u USING (memory_id)
WHERE m.namespace = ? AND m.status = 'active'
GROUP BY ALL
"""
# the user's node events in log order (a namespace lives on one partition)
EDITS = """
SELECT occurred_at, type, payload->>'path' AS path FROM memory_log
WHERE namespace = ? AND type IN ('TreeNodeAdded', 'TreeNodeRemoved')
ORDER BY log_partition, log_offset
"""
# every memory of the given statuses, grouped alike, for the recall filter
MEMBERS = """
SELECT category, subject, entities, list(memory_id ORDER BY memory_id) AS ids FROM memories
WHERE namespace = ? AND status IN (SELECT unnest(?::VARCHAR[])) GROUP BY ALL
"""


def load_tree(
    query: Query,
    namespace: str,
    config: TreeConfig | None = None,
    now: datetime | None = None,
) -> CategoryTree:
    """The namespace's tree; ``now`` (default: the namespace's event-time now, as for hot
    memory) is when the idle rule judges it."""
    rows = query(MEMORIES, [namespace, namespace])
    memories = [
        Placed(
            category=str(r["category"]),
            subject=r["subject"],
            entities=tuple(r["entities"].split(SEP)) if r["entities"] else (),
            last_use=datetime.fromtimestamp(r["last_use"], UTC),
            alike=int(r["n"]),
        )
        for r in rows
    ]
    edits = [
        NodeEdit(str(r["path"]), r["type"] == "TreeNodeAdded", r["occurred_at"])
        for r in query(EDITS, [namespace])
    ]
    if now is None:
        now_rows = query(NOW, [namespace])
        now = now_rows[0]["now"] if now_rows else None
    return build_tree(namespace, memories, edits, now, config or TreeConfig())


def members(query: Query, tree: CategoryTree, prefix: str, statuses: Sequence[str]) -> list[str]:
    """The ids of the namespace's memories (of these statuses) shown at ``prefix`` or below."""
    out: list[str] = []
    for r in query(MEMBERS, [tree.namespace, list(statuses)]):
        path = tree.place(str(r["category"]), r["subject"], tuple(r["entities"] or ()))
        if path is not None and (path == prefix or path.startswith(prefix + "/")):
            out.extend(r["ids"])
    return sorted(out)


def tree_digest(query: Query, namespace: str) -> str:
    """A hash of the namespace's tree (nodes, counts, last uses, what was left out), for
    ``memstream verify``."""
    import orjson

    return hashlib.sha1(orjson.dumps(load_tree(query, namespace).as_dict())).hexdigest()


# what the tree of a namespace depends on, but for accesses (see TreeIndex)
class TreeIndex:
    """The trees recall and the context call read (``consumers.recall.TreeLookup``): each namespace's tree is
    kept until the projection applies memory-log events of it (``version``: memories and
    node events), so a recall costs a dictionary lookup, not a tree. Accesses since then
    extend last uses only at the next change: recall's tree path may lag ``GET /v1/tree`` by
    the accesses of a quiet namespace, never by a memory."""

    MAX_NAMESPACES = 256

    def __init__(
        self, query: Query, version: Callable[[str], Hashable], inputs: Inputs | None = None
    ) -> None:
        self.query = query
        self.version = version
        self.inputs = inputs  # without: the queries on every change
        self._trees: dict[str, tuple[Hashable, CategoryTree]] = {}

    def tree(self, namespace: str) -> CategoryTree:
        key = self.version(namespace)
        cached = self._trees.get(namespace)
        if cached is not None and cached[0] == key:
            return cached[1]
        if self.inputs is not None:
            memories, edits, now = self.inputs(namespace)
            tree = build_tree(namespace, memories, edits, now, TreeConfig())
        else:
            tree = load_tree(self.query, namespace)
        if len(self._trees) >= self.MAX_NAMESPACES:
            self._trees.pop(next(iter(self._trees)))
        self._trees[namespace] = (key, tree)
        return tree

    def members(self, tree: CategoryTree, prefix: str, statuses: Sequence[str]) -> list[str]:
        return members(self.query, tree, prefix, statuses)
