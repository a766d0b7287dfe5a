"""The gate's sparse vectors give back the dense rows bit for bit, and so the same scores."""

from __future__ import annotations

import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.embedding import HashingEmbedder
from memstream.core.sparse_rows import DenseCache, SparseRows

EMBEDDER = HashingEmbedder()
WORDS = st.sampled_from(["coffee", "tea", "Lena", "Berlin", "works", "at", "likes", "new", "job"])
TEXTS = st.lists(WORDS, min_size=0, max_size=8).map(" ".join)


def dense_of(vectors: list[np.ndarray]) -> np.ndarray:
    """The matrix the gate kept before: rows in a geometrically grown array."""
    matrix = np.zeros((max(16, len(vectors) * 2), EMBEDDER.dim), dtype=np.float32)
    for i, v in enumerate(vectors):
        matrix[i] = v
    return matrix


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXTS, min_size=1, max_size=40), st.lists(st.tuples(st.integers(0, 39), TEXTS)))
def test_rows_rebuild_bit_for_bit(texts: list[str], rewrites: list[tuple[int, str]]) -> None:
    rows = SparseRows(EMBEDDER.dim)
    vectors = [EMBEDDER.embed([t])[0] for t in texts]
    for i, v in enumerate(vectors):
        rows.set(i, v)
    for i, text in rewrites:  # a memory's text changed: its row is set again
        if i < len(vectors):
            vectors[i] = EMBEDDER.embed([text])[0]
            rows.set(i, vectors[i])
    restored = pickle.loads(pickle.dumps(rows))
    old = dense_of(vectors)
    for r in (rows, restored):
        rebuilt = r.dense(r.count)
        assert rebuilt.tobytes() == old[: len(vectors)].tobytes()
        query = EMBEDDER.embed([texts[0]])[0]
        n = len(vectors)
        assert (rebuilt[:n] @ query).tobytes() == (old[:n] @ query).tobytes()
        for i in range(n):
            assert r.row(i).tobytes() == vectors[i].tobytes()
            assert float(r.row(i) @ query) == float(old[i] @ query)


def test_negative_zero_is_kept() -> None:
    rows = SparseRows(8)
    v = np.array([0.0, -0.0, 1.0, 0, 0, 0, 0, 0], dtype=np.float32)
    rows.set(0, v)
    assert rows.row(0).tobytes() == v.tobytes()


def test_rows_set_in_order_only() -> None:
    rows = SparseRows(8)
    try:
        rows.set(1, np.ones(8, dtype=np.float32))
    except IndexError:
        return
    raise AssertionError("a gap in the rows was accepted")


def test_dense_cache_follows_changes_and_stays_in_budget() -> None:
    class Owner:
        pass

    cache = DenseCache(budget=2 * 16 * 8 * 4)  # two 16-row matrices of dim 8
    owners = [Owner() for _ in range(3)]
    sparse = [SparseRows(8) for _ in owners]
    for o, s in zip(owners, sparse, strict=True):
        for i in range(16):
            v = np.eye(8, dtype=np.float32)[i % 8] * (i + 1)
            s.set(i, v)
            cache.changed(o, i, v)
        cache.matrix(o, s)
    assert len(cache._held) == 2  # the oldest left
    new = np.full(8, 0.5, dtype=np.float32)
    sparse[2].set(16, new)
    cache.changed(owners[2], 16, new)
    assert cache.matrix(owners[2], sparse[2])[:17].tobytes() == sparse[2].dense(17).tobytes()


class DenseModel:
    """A model-like embedder: every dimension non-zero."""

    name, version, dim = "dense-model", "1", 8

    def embed(self, texts: list[str]) -> np.ndarray:
        rng = [np.random.default_rng(sum(map(ord, t))) for t in texts]
        out = np.array([r.standard_normal(self.dim) for r in rng], dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_model_vectors_stay_one_dense_matrix() -> None:
    from datetime import UTC, datetime

    from memstream.core.namespace_memory import NamespaceMemory
    from memstream.core.sparse_rows import DenseRows
    from memstream.schemas.envelope import make_event
    from memstream.schemas.events import MemoryCreated

    hashing = NamespaceMemory("ns", EMBEDDER)
    dense = NamespaceMemory("ns", DenseModel())  # type: ignore[arg-type]
    assert isinstance(hashing._vectors, SparseRows)
    assert isinstance(dense._vectors, DenseRows)
    at = datetime(2024, 1, 1, tzinfo=UTC)
    for i, text in enumerate(["tea at noon", "coffee in Berlin", "Lena moved"]):
        env = make_event(
            MemoryCreated(memory_id=f"m{i}", text=text, category="fact", content_hash=f"{i:064x}"),
            namespace="ns",
            occurred_at=at,
            event_id=f"e{i}",
        )
        dense.apply(env)
    query = dense.embed("coffee in Berlin")
    found = dense.closest(query)
    assert found is not None and found.memory_id == "m1"
    restored = pickle.loads(pickle.dumps(dense._vectors))
    assert restored.dense(3)[:3].tobytes() == dense._vectors.matrix[:3].tobytes()


def test_vectors_are_each_memorys_vector_for_both_kinds_of_rows() -> None:
    """``vectors`` (what a dream cycle reads) gives what ``vector`` gives, one by one."""
    from datetime import UTC, datetime

    from memstream.core.namespace_memory import NamespaceMemory
    from memstream.schemas.envelope import make_event
    from memstream.schemas.events import MemoryCreated, MemoryUpdated

    at = datetime(2024, 1, 1, tzinfo=UTC)
    for memory in (NamespaceMemory("ns", EMBEDDER), NamespaceMemory("ns", DenseModel())):  # type: ignore[arg-type]
        texts = ["tea at noon", "coffee in Berlin", "Lena moved", "a rescue dog"]
        for i, text in enumerate(texts):
            memory.apply(
                make_event(
                    MemoryCreated(
                        memory_id=f"m{i}", text=text, category="fact", content_hash=f"{i:064x}"
                    ),
                    namespace="ns",
                    occurred_at=at,
                    event_id=f"e{i}",
                )
            )
        memory.vectors(["m0"])  # the dense matrix made, then a text changes
        memory.apply(
            make_event(
                MemoryUpdated(
                    memory_id="m2",
                    text="Lena moved to Porto",
                    previous_text="Lena moved",
                    content_hash="f" * 64,
                ),
                namespace="ns",
                occurred_at=at,
                event_id="e9",
            )
        )
        ids = ["m3", "m0", "m2"]
        got = memory.vectors(ids)
        assert list(got) == ids
        for mid in ids:
            assert got[mid].tobytes() == memory.vector(mid).tobytes()
