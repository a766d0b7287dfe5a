"""What recall scores with from the access log, kept in memory beside the tables.

Every recall asks, for its candidates, how often and when each was returned before (ACT-R
activation, retention) and how often two of them were returned together (Hebbian
co-activation). Asked of ``access_hits`` that is a group-by and a self-join over the
namespace's whole access history on every recall, so recall slowed as it was used. Here
both are dictionaries: each namespace's are read from the table on first use, then kept
current by the projection, which hands over the access rows of each committed batch
(``apply``). The answers are exactly the SQL's (a property test compares them).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from itertools import combinations
from typing import Any

Query = Callable[[str, list[Any]], list[dict[str, Any]]]

_COUNTS = (
    "SELECT memory_id, count(*) AS n, max(occurred_at) AS last FROM access_hits "
    "WHERE namespace = ? GROUP BY memory_id"
)
_PAIRS = (
    "SELECT a.memory_id AS a, b.memory_id AS b, count(*) AS n FROM access_hits a "
    "JOIN access_hits b ON a.event_id = b.event_id AND a.memory_id < b.memory_id "
    "WHERE a.namespace = ? GROUP BY ALL"
)
MAX_NAMESPACES = 512


class _Usage:
    __slots__ = ("counts", "pairs")

    def __init__(self) -> None:
        self.counts: dict[str, list[Any]] = {}  # memory id -> [times returned, latest]
        self.pairs: dict[tuple[str, str], int] = {}  # (a, b), a < b -> times together


class UsageIndex:
    def __init__(self, query: Query) -> None:
        self.query = query
        self._lock = threading.Lock()
        self._spaces: dict[str, _Usage] = {}

    def _loaded(self, namespace: str) -> _Usage:
        usage = self._spaces.get(namespace)
        if usage is None:
            usage = _Usage()
            for r in self.query(_COUNTS, [namespace]):
                usage.counts[r["memory_id"]] = [int(r["n"]), r["last"]]
            for r in self.query(_PAIRS, [namespace]):
                usage.pairs[(r["a"], r["b"])] = int(r["n"])
            if len(self._spaces) >= MAX_NAMESPACES:
                self._spaces.pop(next(iter(self._spaces)))  # the oldest loaded
            self._spaces[namespace] = usage
        return usage

    def apply(self, hits: Iterable[Mapping[str, Any]]) -> None:
        """A committed batch's new ``access_hits`` rows (namespace, event_id, memory_id,
        occurred_at). Namespaces not loaded yet will read the table when asked."""
        events: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
        for row in hits:
            events[(row["namespace"], row["event_id"])].append(row)
        with self._lock:
            for (ns, _event), rows in events.items():
                usage = self._spaces.get(ns)
                if usage is None:
                    continue
                for row in rows:
                    seen = usage.counts.get(row["memory_id"])
                    at = row["occurred_at"]
                    if seen is None:
                        usage.counts[row["memory_id"]] = [1, at]
                    else:
                        seen[0] += 1
                        if at is not None and (seen[1] is None or at > seen[1]):
                            seen[1] = at
                for a, b in combinations([r["memory_id"] for r in rows], 2):
                    if a != b:
                        key = (a, b) if a < b else (b, a)
                        usage.pairs[key] = usage.pairs.get(key, 0) + 1

    def usage(self, namespace: str, ids: Sequence[str]) -> dict[str, tuple[int, datetime | None]]:
        """Times returned and the latest, for those of ``ids`` ever returned."""
        with self._lock:
            counts = self._loaded(namespace).counts
            return {mid: (seen[0], seen[1]) for mid in ids if (seen := counts.get(mid))}

    def together(self, namespace: str, ids: Sequence[str]) -> dict[tuple[str, str], int]:
        """Times returned together, for the pairs of ``ids`` (a < b) that ever were."""
        with self._lock:
            pairs = self._loaded(namespace).pairs
            wanted = sorted(set(ids))
            if len(pairs) < len(wanted) * (len(wanted) - 1) // 2:  # the fewer lookups
                members = set(wanted)
                return {k: n for k, n in pairs.items() if k[0] in members and k[1] in members}
            return {key: n for key in combinations(wanted, 2) if (n := pairs.get(key))}
