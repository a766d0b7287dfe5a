"""The live relation graph in memory, beside the ``relations`` table it mirrors.

A neighbourhood query walked in SQL (``graph_queries.neighbourhood_sql``, a recursive CTE)
costs ~15 ms at 100k edges, most of it the join per hop; walked over adjacency lists it is
a few dictionary lookups. The reached memories' labels (text, category, status) are kept
too: read from the table, a hundred of them took ~4 ms (DuckDB scans ``memories`` for an
id list; its index serves single ids only), most of a 2-hop query.

Each namespace's adjacency is read from ``relations`` on first use and kept current by the
projection, which hands over the batch's final edge rows after its transaction commits
(``apply``); its labels likewise from ``memories``, with the batch's changed memories
(``apply_labels``). Both are kept for the namespaces asked about lately
(``projections/kept_spaces.py``: ``MAX_NAMESPACES`` of adjacency, ``MAX_LABELLED`` of
labels, whose texts are the bulk). The walk answers exactly what the SQL walk answers (a
property test compares them): every memory within ``hops`` edges of the start, either
direction, each at its least depth, and every edge of a memory less than ``hops`` away,
labelled as the table labels it. ``as_of`` questions still go to SQL over the log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from memstream.projections.kept_spaces import KeptSpaces

Query = Callable[[str, list[Any]], list[dict[str, Any]]]
EdgeKey = tuple[str, str, str]  # (source_id, target_id, relation)
Row = dict[str, Any]  # source_id, target_id, relation, confidence, rule, added_at

_EDGES = (
    "SELECT source_id, target_id, relation, confidence, rule, added_at FROM relations "
    "WHERE namespace = ?"
)
_LABELS = "SELECT memory_id, text, category, status FROM memories WHERE namespace = ?"
MAX_NAMESPACES = 512
MAX_LABELLED = 64
Label = dict[str, Any]  # text, category, status


class GraphIndex:
    def __init__(self, query: Query) -> None:
        self.query = query
        self._lock = threading.Lock()
        # namespace -> memory id -> {edge key: row} for every edge touching that memory
        self._adjacent: KeptSpaces[dict[str, dict[EdgeKey, Row]]] = KeptSpaces(MAX_NAMESPACES)
        # namespace -> memory id -> its label, for every memory of the namespace
        self._labels: KeptSpaces[dict[str, Label]] = KeptSpaces(MAX_LABELLED)

    def _read_edges(self, namespace: str) -> dict[str, dict[EdgeKey, Row]]:
        adjacent: dict[str, dict[EdgeKey, Row]] = {}
        for row in self.query(_EDGES, [namespace]):
            _link(adjacent, row)
        return adjacent

    def apply(self, final: Mapping[tuple[str, str, str, str], Row | None]) -> None:
        """A committed batch's edges: ``(namespace, source, target, relation)`` -> its row,
        or None when removed. Namespaces not loaded yet will read the table when asked."""
        with self._lock:
            for (ns, source, target, relation), row in final.items():
                adjacent = self._adjacent.get(ns)
                if adjacent is None:
                    continue
                key = (source, target, relation)
                for node in (source, target):
                    edges = adjacent.get(node)
                    if edges is not None:
                        edges.pop(key, None)
                        if not edges:
                            del adjacent[node]
                if row is not None:
                    _link(adjacent, row)

    def labelled(self, namespace: str) -> bool:
        """Whether the namespace's labels are kept (the projection hands changes for it)."""
        return namespace in self._labels

    def labels(self, namespace: str, ids: Iterable[str]) -> dict[str, Label]:
        """The labels of those of ``ids`` the namespace has (what ``memories`` holds)."""
        with self._lock:
            kept = self._labels.loaded(namespace, lambda: self._read_labels(namespace))
            return {mid: label for mid in ids if (label := kept.get(mid)) is not None}

    def _read_labels(self, namespace: str) -> dict[str, Label]:
        return {str(r["memory_id"]): _label(r) for r in self.query(_LABELS, [namespace])}

    def apply_labels(self, changed: Iterable[tuple[str, str, Label | None]]) -> None:
        """A committed batch's changed memories: (namespace, id, its label; None when gone)."""
        with self._lock:
            for ns, mid, label in changed:
                kept = self._labels.get(ns)
                if kept is None:
                    continue
                if label is None:
                    kept.pop(mid, None)
                else:
                    kept[mid] = label

    def neighbourhood(
        self, namespace: str, start: str, hops: int, relation: str | None = None
    ) -> tuple[dict[str, int], dict[EdgeKey, Row]]:
        """``(memory id -> least depth, edge key -> row)`` within ``hops`` of ``start``."""
        with self._lock:
            adjacent = self._adjacent.loaded(namespace, lambda: self._read_edges(namespace))
            depth = {start: 0}
            found: dict[EdgeKey, Row] = {}
            frontier = [start]
            for d in range(hops):
                reached: list[str] = []
                for node in frontier:
                    for key, row in adjacent.get(node, {}).items():
                        if relation is not None and key[2] != relation:
                            continue
                        found[key] = row
                        other = key[1] if key[0] == node else key[0]
                        if other not in depth:
                            depth[other] = d + 1
                            reached.append(other)
                frontier = reached
            return depth, found


def _label(row: Mapping[str, Any]) -> Label:
    return {"text": row["text"], "category": row["category"], "status": row["status"]}


def label_of(state: Any) -> Label:
    """A memory state's label (a ``core.memory_state.MemoryState``: the table's row of it)."""
    return {"text": state.text, "category": state.category, "status": state.status}


def _link(adjacent: dict[str, dict[EdgeKey, Row]], row: Row) -> None:
    key = (row["source_id"], row["target_id"], row["relation"])
    edge = {
        name: row[name]
        for name in ("source_id", "target_id", "relation", "confidence", "rule", "added_at")
    }
    adjacent.setdefault(key[0], {})[key] = edge
    adjacent.setdefault(key[1], {})[key] = edge
