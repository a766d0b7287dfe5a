"""The analytics projection: every topic into DuckDB, with the offsets it applied.

One batch is one transaction: raw rows, derived rows, the memory fold and the new
positions commit together, so a crash leaves either all of a batch or none of it and the
runner resumes exactly after the last committed record. Rows go in as Arrow tables
(``executemany`` is two orders of magnitude slower). Repeated event ids are dropped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import threading
import uuid
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import UTC, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import duckdb
import orjson
import pyarrow as pa

from memstream.core.category_tree import NodeEdit
from memstream.core.hot_memory import HotConfig
from memstream.core.memory_state import MemoryState, apply, memory_ids_of
from memstream.core.topics import TopicClusters
from memstream.projections.duckdb_schema import TABLES, VIEWS
from memstream.projections.graph_index import GraphIndex, label_of
from memstream.projections.hot_index import HotIndex, row_of
from memstream.projections.hot_queries import block_digest
from memstream.projections.memory_mirror import Entry, MemoryMirror, entry_of
from memstream.projections.port import ApplyStats, LogRecord, Projection
from memstream.projections.tree_queries import tree_digest
from memstream.projections.usage_index import UsageIndex
from memstream.projections.user_sql import Statement, lock_down, memory_limit_sql
from memstream.projections.user_sql import run as run_user_sql
from memstream.schemas.envelope import DEFAULT_LIMITS, Envelope, Limits, decode
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import (
    MemoryEdit,
    RelationAdded,
    RelationRemoved,
    TreeEdit,
    TreeNodeAdded,
    TreeNodeRemoved,
)
from memstream.schemas.topics import BY_ROLE
from memstream.streams.deadletter import decode_dead_letter

MEMORY_FIELDS = [f.name for f in dataclasses.fields(MemoryState)]

#: table -> primary key columns, for digests
DIGEST_KEYS: dict[str, tuple[str, ...]] = {
    **{
        t: ("event_id",)
        for t in (
            "turns",
            "access",
            "feedback",
            "workflows",
            "recall_requests",
            "recall_replies",
            "memory_log",
            "searches",
        )
    },
    "access_hits": ("event_id", "memory_id"),
    "memories": ("namespace", "memory_id"),
    "relations": ("namespace", "source_id", "target_id", "relation"),
    "dead_letters": ("topic", "log_partition", "log_offset"),
    "projection_rejects": ("topic", "log_partition", "log_offset"),
}


@dataclasses.dataclass(frozen=True)
class Digest:
    positions: dict[tuple[str, int], int]
    tables: dict[str, dict[str, str]]  # table -> primary key -> row hash


def diff_digests(live: Digest, rebuilt: Digest, limit: int = 20) -> list[str]:
    """Human-readable differences (empty when identical)."""
    out: list[str] = []
    for table in sorted(set(live.tables) | set(rebuilt.tables)):
        a, b = live.tables.get(table, {}), rebuilt.tables.get(table, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                state = (
                    "only live" if key not in b else "only rebuilt" if key not in a else "differs"
                )
                out.append(f"{table} {key}: {state}")
                if len(out) >= limit:
                    return [*out, "..."]
    return out


_TUPLE_FIELDS = {"entities", "source_turn_ids", "relations", "unhelpful_for"}
_TIMES = ("valid_from", "valid_until", "created_at", "updated_at")


def _zone(name: str) -> tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def _envelope_row(env: Envelope[Any], record: LogRecord) -> dict[str, Any]:
    return {**env.header(), "log_partition": record.partition, "log_offset": record.offset}


def _payload_json(env: Envelope[Any]) -> str:
    return orjson.dumps(env.payload).decode()


def _turn(env: Envelope[Any]) -> dict[str, Any]:
    p = env.payload
    return {"turn_id": p.turn_id, "role": p.role, "speaker": p.speaker, "text": p.text}


def _access(env: Envelope[Any]) -> dict[str, Any]:
    p = env.payload
    return {
        "query_id": p.query_id,
        "query": p.query,
        "top_score": p.top_score,
        "result_count": len(p.memories),
        "source": p.source,
    }


def _feedback(env: Envelope[Any]) -> dict[str, Any]:
    p = env.payload
    if isinstance(p, MemoryEdit):  # direct edits share the feedback topic
        return {
            "query_id": None,
            "outcome": f"edit:{p.action}",
            "reward": None,
            "memory_ids": [p.memory_id],
            "reason": p.reason,
        }
    if isinstance(p, TreeEdit):  # so do the user's category tree edits
        return {
            "query_id": None,
            "outcome": f"tree:{p.action}",
            "reward": None,
            "memory_ids": [],
            "reason": p.reason,
        }
    return {
        "query_id": p.query_id,
        "outcome": p.outcome,
        "reward": p.reward,
        "memory_ids": list(p.memory_ids),
        "reason": p.reason,
    }


def _workflow(env: Envelope[Any]) -> dict[str, Any]:
    p = env.payload
    return {"workflow": p.workflow, "outcome": p.outcome, "detail": p.detail}


def _recall_request(env: Envelope[Any]) -> dict[str, Any]:
    p = env.payload
    return {"query_id": p.query_id, "query": p.query, "k": p.k}


def _recall_reply(env: Envelope[Any]) -> dict[str, Any]:
    p = env.payload
    return {"query_id": p.query_id, "result_count": len(p.results), "error": p.error}


def _memory(env: Envelope[Any]) -> dict[str, Any]:
    return {"memory_id": getattr(env.payload, "memory_id", None)}


#: role -> (table, typed columns of the payload)
RAW: dict[str, tuple[str, Callable[[Envelope[Any]], dict[str, Any]]]] = {
    "turns": ("turns", _turn),
    "access": ("access", _access),
    "feedback": ("feedback", _feedback),
    "workflows": ("workflows", _workflow),
    "recall_requests": ("recall_requests", _recall_request),
    "recall_replies": ("recall_replies", _recall_reply),
    "memory_log": ("memory_log", _memory),
}


def state_row(state: MemoryState) -> dict[str, Any]:
    row = {name: getattr(state, name) for name in MEMORY_FIELDS}
    for name in _TUPLE_FIELDS:
        row[name] = list(row[name])
    return row


def state_from_row(row: dict[str, Any]) -> MemoryState:
    values = {name: row[name] for name in MEMORY_FIELDS}
    for name in _TUPLE_FIELDS:
        values[name] = tuple(values[name] or ())
    values["metadata"] = values["metadata"] or ""  # a row from before the column
    return MemoryState(**values)


#: up to this many ids a lookup takes them as parameters (see ``_within``)
_FEW = 8


def _within(ids: Sequence[str]) -> tuple[str, list[Any]]:
    """What goes in ``col IN (...)`` for ``ids``, and its parameters: a few as parameters
    (half the time of an unnested list, and an index on ``col`` is used), more as one
    list."""
    if len(ids) <= _FEW:
        return ", ".join("?" * len(ids)), list(ids)
    return "SELECT unnest(?::VARCHAR[])", [list(ids)]


class DuckDBProjection(Projection):
    name = "duckdb"

    def __init__(
        self,
        path: str | Path,
        topics: dict[str, str],
        limits: Limits = DEFAULT_LIMITS,
        *,
        memory_limit: str | None = None,
        threads: int = 0,
    ) -> None:
        """``topics``: role -> topic name (see ``infra.topics.topic_names``).
        ``memory_limit``: DuckDB's, for the whole database (user SQL included); set before
        the configuration is locked. ``threads``: DuckDB's worker threads for the whole
        database (0: its default, one per core)."""
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.con = duckdb.connect(self.path)
        if memory_limit:
            self.con.execute(memory_limit_sql(memory_limit))
        if threads > 0:
            self.con.execute(f"SET threads = {int(threads)}")
        self.con.execute(
            "SET enable_external_access = false"
        )  # the store needs no files beyond its own
        self.roles = {name: role for role, name in topics.items()}
        self.limits = limits
        for table, columns in TABLES.items():
            self.con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({columns})")
        # columns added after a file was created (a replay gives a fresh file anyway)
        self.con.execute("ALTER TABLE memories ADD COLUMN IF NOT EXISTS immutable BOOLEAN")
        self.con.execute("ALTER TABLE memories ADD COLUMN IF NOT EXISTS metadata VARCHAR")
        self.con.execute("ALTER TABLE memories ADD COLUMN IF NOT EXISTS relations VARCHAR[]")
        self.con.execute("ALTER TABLE memories ADD COLUMN IF NOT EXISTS unhelpful_for VARCHAR[]")
        # DuckDB scans for a composite key (the primary key's index serves uniqueness only):
        # the fold looks rows up and deletes them through these (``_load_states``, ``_delete``)
        self.con.execute("CREATE INDEX IF NOT EXISTS memories_by_id ON memories (memory_id)")
        self.con.execute("CREATE INDEX IF NOT EXISTS relations_by_source ON relations (source_id)")
        for view, body in VIEWS.items():
            self.con.execute(f"CREATE OR REPLACE VIEW {view} AS {body}")
        # User SQL gets its own connection (DuckDB connections are per thread) behind a lock.
        self.topics = TopicClusters()
        self._topics_before: dict[str, Any] = {}  # of the batch being applied (see apply)
        for ns, label, query in self.con.execute(
            "SELECT namespace, topic, query FROM searches ORDER BY occurred_at, event_id"
        ).fetchall():
            self.topics.seed(ns, label, query or "")
        self.reader = self.con.cursor()
        lock_down(self.reader)
        self.read_lock = threading.Lock()
        # per namespace, a count of the batches that changed it (any table): what a reader's
        # cache of a namespace's derived view keys on (the context call's hot block); with
        # the projection's own identity, so a rebuilt or reopened one never matches
        self._changes: dict[str, int] = {}
        self._memory_changes: dict[str, int] = {}  # the same, memory-log events only
        self._identity = uuid.uuid4().hex
        # the live relation graph as adjacency lists, read per namespace from ``relations``
        # and kept current after each committed batch (projections/graph_index.py)
        self.graph = GraphIndex(self.every_row)
        # access counts, latest access and co-retrieval counts, kept the same way
        # (projections/usage_index.py): what every recall scores with
        self.usage = UsageIndex(self.every_row)
        self._edges_applied: dict[tuple[str, str, str, str], dict[str, Any] | None] = {}
        # the hot block's candidate rows and the tree's groups, "now" and node events, kept
        # the same way (projections/hot_index.py, memory_mirror.py): what the context call
        # and recall's tree read after a change
        self.hot = HotIndex(self.every_row)
        self.mirror = MemoryMirror(self.every_row, self._last_access)
        self._memories_applied: list[tuple[str, str, MemoryState | None]] = []
        (zone,) = self.con.execute("SELECT current_setting('TimeZone')").fetchone() or ("UTC",)
        self._zone = _zone(str(zone))  # what the tables give timestamps in
        # makes the connections of user statements (a connection's methods are not for
        # two threads at once: this one only ever makes cursors, under its lock)
        self._cursors = self.con.cursor()
        self._cursors_lock = threading.Lock()

    def user_query(
        self, sql: str, limit: int = 10_000, params: list[Any] | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Read-only user SQL (see ``projections.user_sql``); safe to call from any thread."""
        with self.read_lock:
            return run_user_sql(self.reader, sql, limit, params)

    def rows(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        """``user_query`` as one dict per row (column -> value)."""
        columns, rows = self.user_query(sql, 10_000, params)
        return [dict(zip(columns, row, strict=True)) for row in rows]

    def every_row(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        """``rows`` without a row cap, for the project's own bounded reads (a namespace's
        edges for the graph index); never for user SQL."""
        with self.read_lock:
            rel = self.reader.execute(sql, params or [])
            columns = [d[0] for d in rel.description or []]
            return [dict(zip(columns, row, strict=True)) for row in rel.fetchall()]

    def statement(self, timeout: float | None) -> Statement:
        """A user statement on a connection of its own: it waits on no other reader (recall's
        queries go on meanwhile) and can be interrupted (``projections.user_sql``)."""
        with self._cursors_lock:
            return Statement(self._cursors.cursor(), timeout)

    # --- port ----------------------------------------------------------------------

    def positions(self) -> dict[tuple[str, int], int]:
        rows = self.con.execute(
            "SELECT topic, log_partition, next_offset FROM _positions"
        ).fetchall()
        return {(t, p): o for t, p, o in rows}

    def apply(self, records: Sequence[LogRecord]) -> ApplyStats:
        # search topics are assigned in memory before the transaction: a failed batch must
        # not leave them advanced, or its retry (and every later search) would be labelled
        # unlike a rebuild
        self._topics_before = {}
        try:
            return self._apply(records)
        except BaseException:
            for ns, snapshot in self._topics_before.items():
                self.topics.restore(ns, snapshot)
            self._edges_applied = {}  # rolled back with the transaction
            self._memories_applied = []
            raise

    def _apply(self, records: Sequence[LogRecord]) -> ApplyStats:
        stats = ApplyStats(records=len(records))
        rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        memory_events: list[Envelope[Any]] = []
        seen: dict[str, set[str]] = defaultdict(set)
        decoded: list[tuple[str, Envelope[Any], LogRecord]] = []
        for record in records:
            role = self.roles.get(record.topic)
            if role == "dlq":
                rows["dead_letters"].append(self._dead_letter_row(record))
                continue
            if role not in RAW:
                continue
            try:
                env = decode(record.value, limits=self.limits)
                if env.type not in BY_ROLE[role].event_types:
                    # the agents dead-letter it; here it is kept as a reject, never projected
                    raise EventValidationError(
                        "wrong_topic", f"{env.type} does not belong on {record.topic}"
                    )
            except EventValidationError as e:
                rows["projection_rejects"].append(
                    {
                        "topic": record.topic,
                        "log_partition": record.partition,
                        "log_offset": record.offset,
                        "reason": str(e),
                        "original": record.value,
                    }
                )
                stats.rejected += 1
                continue
            decoded.append((role, env, record))
        existing = self._existing_ids(decoded)
        for role, env, record in decoded:
            table, typed = RAW[role]
            if env.event_id in existing[table] or env.event_id in seen[table]:
                stats.duplicates += 1
                continue
            seen[table].add(env.event_id)
            stats.applied += 1
            rows[table].append(
                {**_envelope_row(env, record), **typed(env), "payload": _payload_json(env)}
            )
            if role == "memory_log":
                memory_events.append(env)
            elif role == "access":
                rows["searches"].append(self._search_row(env))
                rows["access_hits"].extend(self._hit_rows(env))
        with self._transaction():
            for table, table_rows in rows.items():
                self._insert(
                    table, table_rows, ignore=table in ("dead_letters", "projection_rejects")
                )
            if memory_events:
                self._fold(memory_events)
            self._advance(records)
        # the in-memory indexes first, then the versions readers key their caches on: a
        # reader that sees the new version reads indexes that hold the batch
        if self._edges_applied:
            self.graph.apply(self._edges_applied)
            self._edges_applied = {}
        if rows.get("access_hits"):
            self.usage.apply(rows["access_hits"])
            self.mirror.accessed(rows["access_hits"])
        if self._memories_applied:
            self._index_memories(self._memories_applied)
            self._memories_applied = []
        self.mirror.edited(
            (
                env.namespace,
                env.event_id,
                NodeEdit(p.path, isinstance(p, TreeNodeAdded), env.occurred_at),
            )
            for env in memory_events
            if isinstance(p := env.payload, TreeNodeAdded | TreeNodeRemoved)
        )
        for ns in {env.namespace for _role, env, _record in decoded}:
            self._changes[ns] = self._changes.get(ns, 0) + 1
        for ns in {env.namespace for env in memory_events}:
            self._memory_changes[ns] = self._memory_changes.get(ns, 0) + 1
        return stats

    def _index_memories(self, changed: list[tuple[str, str, MemoryState | None]]) -> None:
        hot: list[tuple[str, str, dict[str, Any] | None]] = []
        mirror: list[tuple[str, str, Entry | None]] = []
        labels: list[tuple[str, str, dict[str, Any] | None]] = []
        for ns, mid, state in changed:
            # a namespace nobody asked about reads the committed tables when first asked:
            # nothing to build for it (a rebuild folds thousands of memories a batch)
            if self.graph.labelled(ns):
                labels.append((ns, mid, None if state is None else label_of(state)))
            if not (self.hot.loaded(ns) or self.mirror.loaded(ns)):
                continue
            if state is None:
                hot.append((ns, mid, None))
                mirror.append((ns, mid, None))
                continue
            values = {name: getattr(state, name) for name in MEMORY_FIELDS}
            for name in _TIMES:
                if values[name] is not None:
                    values[name] = values[name].astimezone(self._zone)
            hot.append((ns, mid, row_of(values)))
            mirror.append((ns, mid, entry_of(values)))
        self.hot.apply(hot)
        self.mirror.apply(mirror)
        self.graph.apply_labels(labels)

    def _last_access(self, namespace: str, ids: Sequence[str]) -> dict[str, Any]:
        return {mid: last for mid, (_n, last) in self.usage.usage(namespace, ids).items()}

    def hot_rows(self, namespace: str, session_id: str | None) -> tuple[list[dict[str, Any]], Any]:
        """What ``hot_queries.CANDIDATES`` and ``NOW`` return, from the kept indexes."""

        def counts(ns: str, ids: Sequence[str]) -> dict[str, int]:
            return {mid: n for mid, (n, _last) in self.usage.usage(ns, ids).items()}

        return self.hot.candidates(namespace, session_id, counts), self.mirror.now(namespace)

    def version(self, namespace: str) -> tuple[str, int]:
        """Changes when anything of ``namespace`` is applied (a reader's cache key)."""
        return self._identity, self._changes.get(namespace, 0)

    def memory_version(self, namespace: str) -> tuple[str, int]:
        """Changes when memory-log events of ``namespace`` are applied (not its accesses)."""
        return self._identity, self._memory_changes.get(namespace, 0)

    def skip(self, record: LogRecord, reason: str) -> None:
        with self._transaction():
            self._insert(
                "projection_rejects",
                [
                    {
                        "topic": record.topic,
                        "log_partition": record.partition,
                        "log_offset": record.offset,
                        "reason": reason,
                        "original": record.value,
                    }
                ],
                ignore=True,
            )
            self._advance([record])

    def close(self) -> None:
        self.reader.close()
        self._cursors.close()
        self.con.close()

    # --- reads -----------------------------------------------------------------------

    def query(
        self, sql: str, params: Sequence[Any] | None = None
    ) -> duckdb.DuckDBPyRelation | None:
        return self.con.sql(sql, params=params) if params else self.con.sql(sql)

    def memory(self, namespace: str, memory_id: str) -> MemoryState | None:
        states = self._load_states({(namespace, memory_id)})
        return states.get((namespace, memory_id))

    def digest(self) -> Digest:
        """Positions plus a hash of every row by primary key, read in one transaction so the
        rows and the positions they correspond to are consistent (``memstream verify``)."""
        with self.read_lock:
            con = self.reader
            con.execute("BEGIN TRANSACTION")
            try:
                positions = {
                    (t, p): o for t, p, o in con.execute("SELECT * FROM _positions").fetchall()
                }
                tables = {}
                for table, key in DIGEST_KEYS.items():
                    rel = con.execute(f"SELECT * FROM {table}")
                    names = [d[0] for d in rel.description or []]
                    idx = [names.index(k) for k in key]
                    tables[table] = {
                        "|".join(str(row[i]) for i in idx): hashlib.sha1(
                            repr(row).encode()
                        ).hexdigest()
                        for row in rel.fetchall()
                    }
                tables["hot_blocks"] = self._hot_blocks(con)
                tables["category_trees"] = self._trees(con)
            finally:
                con.execute("ROLLBACK")
        return Digest(positions, tables)

    def _hot_blocks(self, con: Any) -> dict[str, str]:
        """Each namespace's hot memory block, hashed: a pure function of the projected rows,
        so a rebuild from the log must give the same blocks."""

        def query(sql: str, params: list[Any]) -> list[dict[str, Any]]:
            rel = con.execute(sql, params)
            names = [d[0] for d in rel.description or []]
            return [dict(zip(names, row, strict=True)) for row in rel.fetchall()]

        namespaces = [
            r[0] for r in con.execute("SELECT DISTINCT namespace FROM memories").fetchall()
        ]
        return {ns: block_digest(query, ns, HotConfig()) for ns in sorted(namespaces)}

    @staticmethod
    def _trees(con: Any) -> dict[str, str]:
        """Each namespace's category tree, hashed: like the hot blocks, a pure function of
        the projected rows and the log's node events."""

        def query(sql: str, params: list[Any]) -> list[dict[str, Any]]:
            rel = con.execute(sql, params)
            names = [d[0] for d in rel.description or []]
            return [dict(zip(names, row, strict=True)) for row in rel.fetchall()]

        namespaces = [
            r[0]
            for r in con.execute(
                "SELECT namespace FROM memories UNION SELECT namespace FROM memory_log "
                "WHERE type IN ('TreeNodeAdded', 'TreeNodeRemoved') ORDER BY 1"
            ).fetchall()
        ]
        return {ns: tree_digest(query, ns) for ns in namespaces}

    # --- internals --------------------------------------------------------------------

    def _transaction(self) -> Any:
        con = self.con

        class Tx:
            def __enter__(self) -> None:
                con.execute("BEGIN TRANSACTION")

            def __exit__(self, exc_type: Any, *_: Any) -> None:
                con.execute("ROLLBACK" if exc_type else "COMMIT")

        return Tx()

    def _existing_ids(
        self, decoded: Iterable[tuple[str, Envelope[Any], LogRecord]]
    ) -> dict[str, set[str]]:
        wanted: dict[str, list[str]] = defaultdict(list)
        for role, env, _record in decoded:
            wanted[RAW[role][0]].append(env.event_id)
        existing: dict[str, set[str]] = defaultdict(set)
        for table, ids in wanted.items():
            within, params = _within(ids)
            found = self.con.execute(
                f"SELECT event_id FROM {table} WHERE event_id IN ({within})", params
            ).fetchall()
            existing[table] = {r[0] for r in found}
        return existing

    def _insert(self, table: str, rows: list[dict[str, Any]], *, ignore: bool = False) -> None:
        if not rows:
            return
        # An explicit registration, not a replacement scan: those are disabled together with
        # external access on the connections that run user SQL.
        self.con.register("_batch", pa.Table.from_pylist(rows))
        try:
            verb = "INSERT OR IGNORE" if ignore else "INSERT"
            self.con.execute(f"{verb} INTO {table} BY NAME SELECT * FROM _batch")
        finally:
            # an aborted transaction refuses the unregister too: the insert's own error is
            # the one to report (the reason of a dead letter); the next register replaces it
            with contextlib.suppress(duckdb.Error):
                self.con.unregister("_batch")

    def _load_states(self, keys: set[tuple[str, str]]) -> dict[tuple[str, str], MemoryState]:
        if not keys:
            return {}
        # by id through the index (a composite key is a scan), then the keys asked for: a
        # producer on the Kafka door can reuse an id in another namespace
        within, params = _within(sorted({mid for _ns, mid in keys}))
        rel = self.con.execute(f"SELECT * FROM memories WHERE memory_id IN ({within})", params)
        columns = [d[0] for d in rel.description]
        rows = (dict(zip(columns, values, strict=True)) for values in rel.fetchall())
        return {
            key: state_from_row(row)
            for row in rows
            if (key := (row["namespace"], row["memory_id"])) in keys
        }

    def _delete(self, table: str, key: Sequence[str], rows: Collection[tuple[Any, ...]]) -> None:
        """Deletes ``rows`` of ``table`` by its composite ``key``, whose second column is
        indexed: DuckDB scans the table for a composite key, so that column's values narrow
        the delete through its index first (``memories_by_id``, ``relations_by_source``)."""
        columns = list(zip(*rows, strict=True))
        within, params = _within(sorted(set(columns[1])))
        unnested = ", ".join("unnest(?::VARCHAR[])" for _ in key)
        self.con.execute(
            f"DELETE FROM {table} WHERE {key[1]} IN ({within}) AND "
            f"({', '.join(key)}) IN (SELECT ({unnested}))",
            [*params, *(list(c) for c in columns)],
        )

    def _fold(self, events: list[Envelope[Any]]) -> None:
        self._relations(events)
        keys = {(e.namespace, mid) for e in events for mid in memory_ids_of(e)}
        states: dict[tuple[str, str], MemoryState | None] = dict(self._load_states(keys))
        changed: set[tuple[str, str]] = set()
        for env in events:
            for memory_id in memory_ids_of(env):
                key = (env.namespace, memory_id)
                before = states.get(key)
                after = apply(before, env)
                if after is not before:
                    states[key] = after
                    changed.add(key)
        if not changed:
            return
        self._memories_applied.extend((ns, mid, states[(ns, mid)]) for ns, mid in sorted(changed))
        self._delete("memories", ("namespace", "memory_id"), changed)
        self._insert(
            "memories", [state_row(s) for k in sorted(changed) if (s := states[k]) is not None]
        )

    def _relations(self, events: list[Envelope[Any]]) -> None:
        """The ``relations`` table after the batch's edge events, in log order."""
        final: dict[tuple[str, str, str, str], dict[str, Any] | None] = {}
        for env in events:
            p = env.payload
            if not isinstance(p, RelationAdded | RelationRemoved):
                continue
            key = (env.namespace, p.memory_id, p.target_id, p.relation)
            final[key] = (
                {
                    "namespace": env.namespace,
                    "source_id": p.memory_id,
                    "target_id": p.target_id,
                    "relation": p.relation,
                    "confidence": p.confidence,
                    "rule": p.rule,
                    "added_at": env.occurred_at,
                    "event_id": env.event_id,
                }
                if isinstance(p, RelationAdded)
                else None
            )
        if not final:
            return
        self._edges_applied.update(final)  # the graph index's, once the batch commits
        self._delete("relations", ("namespace", "source_id", "target_id", "relation"), final)
        self._insert("relations", [row for row in final.values() if row is not None])

    def _advance(self, records: Sequence[LogRecord]) -> None:
        ends: dict[tuple[str, int], int] = {}
        for r in records:
            key = (r.topic, r.partition)
            ends[key] = max(ends.get(key, 0), r.offset + 1)
        for (topic, partition), next_offset in ends.items():
            # an update, and an insert only the first time: an upsert costs three times more
            (updated,) = self.con.execute(
                "UPDATE _positions SET next_offset = greatest(next_offset, ?) "
                "WHERE topic = ? AND log_partition = ?",
                [next_offset, topic, partition],
            ).fetchone() or (0,)
            if not updated:
                self.con.execute(
                    "INSERT INTO _positions VALUES (?, ?, ?)", [topic, partition, next_offset]
                )

    def _search_row(self, env: Envelope[Any]) -> dict[str, Any]:
        p = env.payload
        if env.namespace not in self._topics_before:
            self._topics_before[env.namespace] = self.topics.snapshot(env.namespace)
        return {
            "event_id": env.event_id,
            "namespace": env.namespace,
            "occurred_at": env.occurred_at,
            "query_id": p.query_id,
            "query": p.query,
            "topic": self.topics.assign(env.namespace, p.query or ""),
            "top_score": p.top_score,
            "result_count": len(p.memories),
            "source": p.source,
        }

    @staticmethod
    def _hit_rows(env: Envelope[Any]) -> list[dict[str, Any]]:
        p = env.payload
        return [
            {
                "event_id": env.event_id,
                "namespace": env.namespace,
                "memory_id": m.memory_id,
                "occurred_at": env.occurred_at,
                "query_id": p.query_id,
                "rank": m.rank,
                "score": m.score,
            }
            for m in p.memories
        ]

    @staticmethod
    def _dead_letter_row(record: LogRecord) -> dict[str, Any]:
        try:
            dl = decode_dead_letter(record.value)
        except Exception as e:  # an unreadable dead letter is kept raw, never dropped
            return {
                "topic": record.topic,
                "log_partition": record.partition,
                "log_offset": record.offset,
                "reason": "unreadable_dead_letter",
                "message": str(e)[:500],
                "original": record.value,
            }
        return {
            "topic": record.topic,
            "log_partition": record.partition,
            "log_offset": record.offset,
            "reason": dl.reason,
            "message": dl.message,
            "path": dl.path,
            "source_topic": dl.source_topic,
            "source_partition": dl.partition,
            "source_offset": dl.offset,
            "agent": dl.agent,
            "failed_at": dl.failed_at,
            "original": dl.original,
        }
