from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.core.embedding import HashingEmbedder
from memstream.core.memory_state import fold, to_json
from memstream.core.sparse import BM25Encoder
from memstream.projections.archive import ParquetArchive, read_archive
from memstream.projections.port import LogRecord
from memstream.projections.qdrant_projection import QdrantProjection
from memstream.projections.retrieval import CollectionSpec, EdgeRetrievalStore
from memstream.schemas import encode
from tests.unit.test_write_plan import SCRIPT, run


def test_archive_round_trip_and_crash_safety(tmp_path: Path) -> None:
    _m, log = run(SCRIPT)
    recs = [
        LogRecord("t.memory.log", i % 2, i, b"ns", encode(e), 1_700_000_000_000)
        for i, e in enumerate(log)
    ]
    recs.append(LogRecord("t.dlq", 0, 0, None, b"\xff not an event", 1_700_000_000_000))
    archive = ParquetArchive(tmp_path, flush_records=5)
    archive.apply(recs[:6])  # flushed
    archive.apply(recs[6:8])  # buffered only: lost in the "crash" below
    reopened = ParquetArchive(tmp_path, flush_records=5)
    assert reopened.positions() == {("t.memory.log", 0): 5, ("t.memory.log", 1): 6}
    reopened.apply(
        [r for r in recs if r.offset >= reopened.positions().get((r.topic, r.partition), 0)]
    )
    reopened.close()
    back = list(read_archive(tmp_path))
    assert sorted(back, key=lambda r: (r.topic, r.partition, r.offset)) == sorted(
        recs, key=lambda r: (r.topic, r.partition, r.offset)
    )
    assert (
        list(tmp_path.glob("topic=t.memory.log/date=2023-*/*.parquet")) == []
    )  # dated by event time
    assert list(tmp_path.glob("topic=t.memory.log/date=2024-03-01/*.parquet"))


def test_qdrant_projection_is_the_fold_and_idempotent(tmp_path: Path) -> None:
    _m, log = run(SCRIPT)
    emb, sparse = HashingEmbedder(), BM25Encoder()
    store = EdgeRetrievalStore(tmp_path, CollectionSpec.for_models(emb, sparse))
    proj = QdrantProjection(store, "t.memory.log", emb, sparse)
    recs = [LogRecord("t.memory.log", 0, i, b"ns", encode(e)) for i, e in enumerate(log)]
    assert proj.apply(recs).applied > 0
    digest = proj.digest(["ns"])
    assert proj.apply(recs).applied == 0
    assert proj.digest(["ns"]) == digest
    assert {p.memory_id: p.payload.extra["state"] for p in store.all("ns")} == {
        k: to_json(v) for k, v in fold(log).items()
    }
    assert proj.positions() == {("t.memory.log", 0): len(log)}
    hits = store.search(
        "ns", emb.embed(["where does Ann live"])[0], sparse.encode_query("where does Ann live")
    )
    assert "Boston" not in " ".join(
        h.payload.text for h in hits
    )  # superseded: out of default recall
    proj.close()


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(), kids, max_size=3),
    max_leaves=8,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    fields=st.dictionaries(
        st.sampled_from(["event_id", "type", "namespace", "occurred_at", "payload"]), _json
    )
)
def test_archive_keeps_any_record_whatever_its_fields_hold(
    tmp_path_factory: pytest.TempPathFactory, fields: dict[str, object]
) -> None:
    # Bad input is archived too: '"event_id": 7' or '"occurred_at": []' must not stop a chunk.
    root = tmp_path_factory.mktemp("archive")
    value = orjson.dumps(fields)
    archive = ParquetArchive(root, flush_records=1)
    archive.apply([LogRecord("t.turns", 0, 0, b"ns", value, 1_700_000_000_000)])
    assert [r.value for r in read_archive(root)] == [value]


def test_dense_vectors_embed_each_string_once_with_the_same_vectors(tmp_path: Path) -> None:
    """A memory without source text (a summary) is its own context: embedded once, not
    twice, and every vector is the one embedding texts and contexts apart gives."""
    import numpy as np

    from memstream.core.embedding import blend_with_context
    from memstream.projections.qdrant_projection import CONTEXT_WEIGHT

    seen: list[str] = []

    class Counting(HashingEmbedder):
        def embed(self, texts: Sequence[str]) -> Any:
            seen.extend(texts)
            return super().embed(texts)

    emb = Counting()
    store = EdgeRetrievalStore(str(tmp_path / "q"), CollectionSpec.for_models(emb, BM25Encoder()))
    proj = QdrantProjection(store, "t.memory.log", emb, BM25Encoder())
    summary = "facts summary (12 memories): Mia likes tea; Mia moved to Porto."
    turn = "I moved to Porto last May, and I drink green tea every morning."
    docs = [(summary, ""), ("Mia moved to Porto", turn), ("Mia drinks green tea", turn)]
    got = proj.dense_vectors(docs)
    assert sorted(seen) == sorted({summary, turn, "Mia moved to Porto", "Mia drinks green tea"})
    plain = HashingEmbedder()
    expected = blend_with_context(
        plain.embed([t for t, _ in docs]), plain.embed([s or t for t, s in docs]), CONTEXT_WEIGHT
    )
    assert np.array_equal(got, expected)
    store.close()
