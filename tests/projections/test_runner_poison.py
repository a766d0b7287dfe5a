"""A record a projection cannot apply is dead-lettered and stepped over; the rest applies.

The runner's isolation (projections/runner.py) without a broker: real DuckDB and Qdrant edge
stores, a real poison record (a search naming one memory twice: the DuckDB ``access_hits``
key refuses it), and a small in-memory projection for the property over arbitrary batches.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.embedding import HashingEmbedder
from memstream.core.sparse import BM25Encoder
from memstream.infra.topics import topic_names
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.port import ApplyStats, LogRecord, Projection
from memstream.projections.qdrant_projection import QdrantProjection
from memstream.projections.rebuild import Bounded
from memstream.projections.retrieval import CollectionSpec, EdgeRetrievalStore
from memstream.projections.runner import ProjectionRunner, transient
from memstream.schemas import AccessedMemory, MemoryAccessed, WorkflowObserved, encode, make_event

TOPICS = topic_names("t")
T0 = datetime(2024, 3, 1, tzinfo=UTC)


def search(ns: str, query: str, memory_ids: list[str]) -> bytes:
    hits = [AccessedMemory(memory_id=m, rank=i + 1, score=0.5) for i, m in enumerate(memory_ids)]
    return encode(
        make_event(
            MemoryAccessed(
                query_id="q-" + hashlib.sha1(query.encode()).hexdigest()[:12],
                memories=hits,
                query=query,
            ),
            namespace=ns,
            occurred_at=T0,
        )
    )


def workflow(ns: str, detail: str) -> bytes:
    return encode(
        make_event(
            WorkflowObserved(workflow="deploy", outcome="success", detail=detail),
            namespace=ns,
            occurred_at=T0,
        )
    )


def poison(ns: str = "acme") -> bytes:
    """Valid for the agents, but one memory twice breaks the (event_id, memory_id) key."""
    return search(ns, "which kafka version", ["m1", "m1"])


def runner_for(projection: Projection) -> tuple[ProjectionRunner, list[LogRecord]]:
    sent: list[LogRecord] = []

    async def dead_letter(reason: str, record: LogRecord) -> None:
        sent.append(record)

    return ProjectionRunner("", [], projection, dead_letter=dead_letter, retry_pause=0), sent


def test_duckdb_poison_is_dead_lettered_and_the_rest_applies() -> None:
    proj = DuckDBProjection(":memory:", TOPICS)
    access, flows = TOPICS["access"], TOPICS["workflows"]
    bad = poison()
    recs = [
        LogRecord(access, 0, 0, b"acme", search("acme", "kafka keys rotation", ["m1"])),
        LogRecord(access, 0, 1, b"acme", bad),
        LogRecord(access, 0, 2, b"acme", search("acme", "kafka key rotation", ["m2"])),
        LogRecord(flows, 1, 0, b"globex", workflow("globex", "after the poison")),
    ]
    runner, sent = runner_for(proj)
    stats = asyncio.run(runner.apply_records(recs))
    assert [(r.topic, r.offset) for r in sent] == [(access, 1)]
    assert runner.health.dead_lettered == 1 and stats.applied == 3 and stats.records == 4
    # the poison's position is recorded, with its reason and bytes, and nothing of it applied
    assert proj.positions() == {(access, 0): 3, (flows, 1): 1}
    _c, rows = proj.user_query("SELECT log_offset, reason, original FROM projection_rejects")
    assert len(rows) == 1 and rows[0][0] == 1 and rows[0][2] == bad
    assert rows[0][1].startswith("ConstraintException") and "duplicate key" in rows[0][1]
    _c, hits = proj.user_query("SELECT memory_id FROM access_hits ORDER BY memory_id")
    assert hits == [("m1",), ("m2",)]
    # the retried batch did not leave the poison's search in the topic clusters
    _c, topics = proj.user_query("SELECT topic FROM searches ORDER BY query")
    assert topics[0] == topics[1]
    proj.close()


def test_a_failed_batch_leaves_the_topic_clusters_as_they_were() -> None:
    clean, dirty = DuckDBProjection(":memory:", TOPICS), DuckDBProjection(":memory:", TOPICS)
    access = TOPICS["access"]
    good = [LogRecord(access, 0, 0, b"a", search("a", "kafka keys rotation", ["m1"]))]
    with pytest.raises(duckdb.Error):
        dirty.apply([*good, LogRecord(access, 0, 1, b"a", poison("a"))])
    later = [LogRecord(access, 0, 2, b"a", search("a", "rotating kafka keys", ["m2"]))]
    for proj in (clean, dirty):
        proj.apply(good)
        proj.apply(later)
    q = "SELECT query, topic FROM searches ORDER BY query"
    assert clean.user_query(q) == dirty.user_query(q)


def test_qdrant_skip_moves_the_checkpoint_past_the_record(tmp_path: Path) -> None:
    emb, sparse = HashingEmbedder(), BM25Encoder()
    store = EdgeRetrievalStore(tmp_path, CollectionSpec.for_models(emb, sparse))
    proj = QdrantProjection(store, "t.memory.log", emb, sparse)
    proj.skip(LogRecord("t.memory.log", 2, 7, b"ns", b"{}"), "ValueError: x")
    assert proj.positions() == {("t.memory.log", 2): 8}
    proj.close()


def test_transient_errors_are_the_stores_not_the_records() -> None:
    assert transient(ConnectionRefusedError("broker"))
    assert transient(TimeoutError())
    assert transient(duckdb.IOException("disk full"))
    try:
        try:
            raise OSError("socket closed")
        except OSError as e:
            raise RuntimeError("store call failed") from e
    except RuntimeError as wrapped:
        assert transient(wrapped)
    assert not transient(ZeroDivisionError("division by zero"))
    assert not transient(duckdb.ConstraintException("duplicate key"))
    assert not transient(duckdb.ConversionException("out of range"))
    assert not transient(KeyError("memory_id"))


class Ledger(Projection):
    """An in-memory projection: applies records whose value is not b"poison", atomically
    per batch, like DuckDB; fails the whole batch otherwise."""

    name = "ledger"

    def __init__(self) -> None:
        self.applied: list[int] = []
        self.skipped: list[int] = []
        self.next: dict[tuple[str, int], int] = {}

    def positions(self) -> dict[tuple[str, int], int]:
        return dict(self.next)

    def apply(self, records: Sequence[LogRecord]) -> ApplyStats:
        if any(r.value == b"poison" for r in records):
            raise ValueError("cannot apply")
        self.applied.extend(r.offset for r in records)
        self._advance(records)
        return ApplyStats(records=len(records), applied=len(records))

    def skip(self, record: LogRecord, reason: str) -> None:
        assert reason == "ValueError: cannot apply"
        self.skipped.append(record.offset)
        self._advance([record])

    def _advance(self, records: Sequence[LogRecord]) -> None:
        for r in records:
            self.next[(r.topic, r.partition)] = r.offset + 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), max_size=40))
def test_every_good_record_applies_in_order_and_every_poison_is_dead_lettered(
    bad: list[bool],
) -> None:
    recs = [LogRecord("t", 0, i, None, b"poison" if b else b"ok") for i, b in enumerate(bad)]
    ledger = Ledger()
    runner, sent = runner_for(ledger)
    stats = asyncio.run(runner.apply_records(recs))
    assert ledger.applied == [i for i, b in enumerate(bad) if not b]  # log order kept
    assert ledger.skipped == [r.offset for r in sent] == [i for i, b in enumerate(bad) if b]
    assert runner.health.dead_lettered == sum(bad) and stats.records == len(bad)
    assert ledger.positions() == ({("t", 0): len(bad)} if bad else {})


def test_a_store_error_is_raised_for_a_retry_not_dead_lettered() -> None:
    class Unreachable(Ledger):
        def apply(self, records: Sequence[LogRecord]) -> ApplyStats:
            raise ConnectionRefusedError("store unreachable")

    runner, sent = runner_for(Unreachable())
    with pytest.raises(ConnectionRefusedError):
        asyncio.run(runner.apply_records([LogRecord("t", 0, 0, None, b"ok")]))
    assert sent == [] and runner.health.dead_lettered == 0


def test_many_poison_records_in_a_row_never_stop_the_projection() -> None:
    # how many come in a row is up to whoever writes to the topic
    recs = [LogRecord("t", 0, i, None, b"poison") for i in range(10)]
    recs.append(LogRecord("t", 0, 10, None, b"ok"))
    ledger = Ledger()
    runner, sent = runner_for(ledger)
    asyncio.run(runner.apply_records(recs))
    assert len(sent) == 10 and ledger.applied == [10]


def test_a_rebuild_steps_over_what_the_live_projection_dead_lettered() -> None:
    live, rebuilt = DuckDBProjection(":memory:", TOPICS), DuckDBProjection(":memory:", TOPICS)
    access = TOPICS["access"]
    recs = [
        LogRecord(access, 0, 0, b"acme", poison()),
        LogRecord(access, 0, 1, b"acme", search("acme", "kafka keys", ["m1"])),
    ]
    live_runner, _sent = runner_for(live)
    asyncio.run(live_runner.apply_records(recs))
    # a rebuild has no dead-letter handler (the dead letter is on the log already)
    rebuild = ProjectionRunner("", [], Bounded(rebuilt), retry_pause=0)
    assert asyncio.run(rebuild.apply_records(recs)).rejected == 1
    assert live.digest() == rebuilt.digest()
