"""The ``RetrievalStore`` contract: every adapter must pass all of it (see conftest)."""

from __future__ import annotations

import random
import uuid
import zlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from memstream.core.embedding import HashingEmbedder
from memstream.core.sparse import BM25Encoder, SparseVector
from memstream.projections.retrieval import (
    STATUSES,
    CollectionSpec,
    Hit,
    LogPosition,
    MemoryPayload,
    MemoryPoint,
    RawHit,
    RetrievalStore,
    fuse_rrf,
    point_id,
)
from memstream.projections.retrieval.port import POINT_ID_NAMESPACE

OpenStore = Callable[[CollectionSpec], RetrievalStore]

#: small random vectors keep the suite fast; the dim only has to agree with the data
SPEC = CollectionSpec("contract-random", "1", 16)
DIM = SPEC.dim


@pytest.fixture
def store(open_store: OpenStore) -> RetrievalStore:
    return open_store(SPEC)


def unit(rng: np.random.Generator, dim: int = DIM) -> np.ndarray:
    v = rng.standard_normal(dim)
    return v / np.linalg.norm(v)


def mk(
    memory_id: str,
    namespace: str = "ns-a",
    *,
    dense: Sequence[float] | np.ndarray | None = None,
    sparse: SparseVector | None = None,
    seed: int | None = None,
    offset: int = 0,
    **payload: Any,
) -> MemoryPoint:
    if dense is None:
        dense = unit(
            np.random.default_rng(seed if seed is not None else zlib.crc32(memory_id.encode()))
        )
    payload.setdefault("text", f"memory {memory_id}")
    return MemoryPoint.build(
        memory_id=memory_id,
        namespace=namespace,
        dense=dense,
        sparse=sparse if sparse is not None else SparseVector((1, 7), (1.0, 0.5)),
        payload=MemoryPayload(**payload),
        position=LogPosition(0, offset),
    )


def ids(hits: Sequence[Hit]) -> list[str]:
    return [h.memory_id for h in hits]


def assert_same_point(got: MemoryPoint, want: MemoryPoint) -> None:
    assert (got.memory_id, got.namespace, got.position) == (
        want.memory_id,
        want.namespace,
        want.position,
    )
    assert got.payload == want.payload
    # Stored as float32; cosine collections store unit vectors.
    expected = np.asarray(want.dense) / np.linalg.norm(want.dense)
    np.testing.assert_allclose(got.dense, expected, rtol=1e-5, atol=1e-6)
    assert got.sparse.indices == want.sparse.indices
    np.testing.assert_allclose(got.sparse.values, want.sparse.values, rtol=1e-6)


# --- writes and reads by id -------------------------------------------------------------


def test_upsert_get_round_trip(store: RetrievalStore) -> None:
    point = mk(
        "m1",
        seed=1,
        offset=42,
        text="User prefers tea",
        status="active",
        tier="core",
        category="preference",
        kind="episode",
        valid_from=1_700_000_000.0,
        valid_until=1_800_000_000.5,
        pinned=True,
        importance=0.9,
        q_value=0.25,
        source_turn_ids=("t1", "t2"),
        entities=("user", "tea"),
        extra={"confidence": 0.8, "tags": ["a", "b"], "nested": {"x": 1}},
    )
    store.upsert([point])
    [got] = store.get("ns-a", ["m1"])
    assert_same_point(got, point)
    assert got.point_id == point_id("ns-a", "m1")


def test_get_keeps_request_order_and_skips_missing(store: RetrievalStore) -> None:
    store.upsert([mk("m1"), mk("m2"), mk("m3")])
    assert [p.memory_id for p in store.get("ns-a", ["m3", "nope", "m1"])] == ["m3", "m1"]
    assert store.get("ns-a", []) == []


def test_get_without_vectors(store: RetrievalStore) -> None:
    store.upsert([mk("m1")])
    [got] = store.get("ns-a", ["m1"], with_vectors=False)
    assert got.dense == () and not got.sparse
    assert got.payload.text == "memory m1"


def test_point_ids_are_deterministic_and_namespaced() -> None:
    for ns, mid in [("a", "m"), ("tenant-7", "mem:é/1"), ("x" * 100, "")]:
        assert point_id(ns, mid) == str(uuid.uuid5(POINT_ID_NAMESPACE, f"{ns}\x1f{mid}"))
    assert point_id("a", "m") == point_id("a", "m")
    assert point_id("a", "m") != point_id("b", "m")
    assert point_id("a", "m1") != point_id("a", "m")


def test_reupsert_is_idempotent(store: RetrievalStore) -> None:
    point = mk("m1", seed=3)
    store.upsert([point])
    store.upsert([point])
    store.upsert([point, point])
    assert store.count("ns-a") == 1
    [got] = store.get("ns-a", ["m1"])
    assert_same_point(got, point)


def test_upsert_overwrites_whole_point(store: RetrievalStore) -> None:
    store.upsert([mk("m1", seed=1, tier="core", extra={"old": True})])
    newer = mk("m1", seed=2, offset=9, tier="peripheral", status="superseded")
    store.upsert([newer])
    [got] = store.get("ns-a", ["m1"])
    assert_same_point(got, newer)
    assert "old" not in got.payload.extra


def test_point_without_sparse_terms(store: RetrievalStore) -> None:
    point = mk("m1", sparse=SparseVector())
    store.upsert([point])
    [got] = store.get("ns-a", ["m1"])
    assert not got.sparse
    assert ids(store.dense_search("ns-a", point.dense)) == ["m1"]


def test_same_memory_id_in_two_namespaces_is_two_points(store: RetrievalStore) -> None:
    store.upsert([mk("m1", "ns-a", text="a's"), mk("m1", "ns-b", text="b's")])
    assert store.get("ns-a", ["m1"])[0].payload.text == "a's"
    assert store.get("ns-b", ["m1"])[0].payload.text == "b's"
    store.delete("ns-b", ["m1"])
    assert store.get("ns-b", ["m1"]) == []
    assert store.get("ns-a", ["m1"])[0].payload.text == "a's"


def test_delete(store: RetrievalStore) -> None:
    store.upsert([mk("m1"), mk("m2"), mk("m3")])
    store.delete("ns-a", ["m2", "never-existed"])
    store.delete("ns-a", [])
    assert [p.memory_id for p in store.get("ns-a", ["m1", "m2", "m3"])] == ["m1", "m3"]
    assert store.count("ns-a") == 2
    assert "m2" not in ids(store.dense_search("ns-a", unit(np.random.default_rng(0)), limit=10))


def test_count(store: RetrievalStore) -> None:
    store.upsert([mk(f"a{i}", "ns-a", status=STATUSES[i % 4]) for i in range(8)])
    store.upsert([mk(f"b{i}", "ns-b") for i in range(3)])
    assert store.count("ns-a") == 8
    assert store.count("ns-b") == 3
    assert store.count("ns-none") == 0
    assert store.count("ns-a", statuses=["active"]) == 2
    assert store.count("ns-a", statuses=["superseded", "archived"]) == 4


def test_scroll_pages_cover_the_namespace_once(store: RetrievalStore) -> None:
    store.upsert([mk(f"a{i:02d}", "ns-a", status=STATUSES[i % 4]) for i in range(23)])
    store.upsert([mk(f"b{i}", "ns-b") for i in range(5)])
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page, cursor = store.scroll("ns-a", cursor=cursor, limit=5)
        seen += [p.memory_id for p in page]
        pages += 1
        if cursor is None:
            break
    assert sorted(seen) == [f"a{i:02d}" for i in range(23)]
    assert pages == 5
    assert sorted(p.memory_id for p in store.all("ns-a")) == sorted(seen)
    assert all(p.dense == () for p in store.all("ns-a"))
    assert all(len(p.dense) == DIM for p in store.all("ns-b", with_vectors=True))


def test_data_survives_close_and_reopen(open_store: OpenStore) -> None:
    first = open_store(SPEC)
    point = mk("m1", seed=5)
    first.upsert([point])
    first.close()
    second = open_store(SPEC)
    assert_same_point(second.get("ns-a", ["m1"])[0], point)


def test_collections_are_separated_by_model(
    store: RetrievalStore, open_sibling: Callable[[RetrievalStore, CollectionSpec], RetrievalStore]
) -> None:
    other_spec = CollectionSpec("contract-random", "2", DIM)
    assert other_spec.name != SPEC.name
    other = open_sibling(store, other_spec)
    store.upsert([mk("m1")])
    assert other.count("ns-a") == 0
    assert other.get("ns-a", ["m1"]) == []


def test_wrong_dimension_is_rejected(store: RetrievalStore) -> None:
    with pytest.raises(ValueError, match="dims"):
        store.upsert([mk("m1", dense=[1.0] * (DIM + 1))])
    with pytest.raises(ValueError, match="dims"):
        store.dense_search("ns-a", [1.0] * (DIM - 1))
    with pytest.raises(ValueError, match="NaN"):
        store.upsert([mk("m1", dense=[float("nan")] * DIM)])


def test_namespace_is_mandatory(store: RetrievalStore) -> None:
    q = unit(np.random.default_rng(0))
    with pytest.raises(ValueError, match="namespace"):
        store.dense_search("", q)
    with pytest.raises(ValueError, match="namespace"):
        store.search(None, q, SparseVector())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="namespace"):
        mk("m1", "")
    with pytest.raises(ValueError, match="non-empty"):
        store.dense_search("ns-a", q, statuses=[])


# --- search -------------------------------------------------------------------------------


def test_dense_search_ranks_by_cosine(store: RetrievalStore) -> None:
    rng = np.random.default_rng(7)
    query = unit(rng)
    near = query + 0.05 * unit(rng)
    mid = query + 0.6 * unit(rng)
    store.upsert([mk("far", dense=-query), mk("near", dense=near), mk("mid", dense=mid)])
    hits = store.dense_search("ns-a", query, limit=3)
    assert ids(hits) == ["near", "mid", "far"]
    assert [h.dense.rank for h in hits if h.dense] == [1, 2, 3]
    assert all(h.sparse is None for h in hits)
    assert hits[0].score == pytest.approx(float(near @ query / np.linalg.norm(near)), abs=1e-5)
    assert ids(store.dense_search("ns-a", query, limit=1)) == ["near"]


def test_status_filter_defaults_to_active(store: RetrievalStore) -> None:
    store.upsert([mk(s, status=s) for s in STATUSES])
    q = unit(np.random.default_rng(1))
    assert ids(store.dense_search("ns-a", q)) == ["active"]
    assert sorted(ids(store.dense_search("ns-a", q, statuses=None))) == sorted(STATUSES)
    got = store.dense_search("ns-a", q, statuses=["superseded", "archived"])
    assert sorted(ids(got)) == ["archived", "superseded"]
    assert sorted(
        ids(store.search("ns-a", q, SparseVector((1,), (1.0,)), statuses=None))
    ) == sorted(STATUSES)


def test_tier_category_kind_filters(store: RetrievalStore) -> None:
    store.upsert(
        [
            mk("core-fact", tier="core", category="fact", kind="note"),
            mk("core-pref", tier="core", category="preference", kind="episode"),
            mk("work-pref", tier="working", category="preference", kind="note"),
            mk("peri-fact", tier="peripheral", category="fact", kind="episode"),
        ]
    )
    q = unit(np.random.default_rng(2))
    sp = SparseVector((1,), (1.0,))

    def found(**filters: Any) -> list[str]:
        dense = sorted(ids(store.dense_search("ns-a", q, **filters)))
        sparse = sorted(ids(store.sparse_search("ns-a", sp, **filters)))
        hybrid = sorted(ids(store.search("ns-a", q, sp, **filters)))
        assert dense == sparse == hybrid
        return dense

    assert found(tiers=["core"]) == ["core-fact", "core-pref"]
    assert found(categories=["preference"]) == ["core-pref", "work-pref"]
    assert found(kinds=["episode"]) == ["core-pref", "peri-fact"]
    assert found(tiers=["core", "peripheral"], categories=["fact"]) == ["core-fact", "peri-fact"]
    assert found(tiers="working") == ["work-pref"]
    assert found(tiers=["nonexistent"]) == []
    # the category tree filter reaches the store as the ids under the node
    assert found(memory_ids=["core-fact", "work-pref", "gone"]) == ["core-fact", "work-pref"]
    assert found(memory_ids=["core-fact", "work-pref"], tiers=["core"]) == ["core-fact"]


def test_validity_is_half_open(store: RetrievalStore) -> None:
    store.upsert(
        [
            mk("always"),
            mk("from-100", valid_from=100.0),
            mk("until-200", valid_until=200.0),
            mk("100-200", valid_from=100.0, valid_until=200.0),
        ]
    )
    q = unit(np.random.default_rng(3))

    def at(t: float | None) -> list[str]:
        return sorted(ids(store.dense_search("ns-a", q, valid_at=t)))

    assert at(None) == ["100-200", "always", "from-100", "until-200"]
    assert at(50) == ["always", "until-200"]
    assert at(100) == ["100-200", "always", "from-100", "until-200"]
    assert at(199.999) == ["100-200", "always", "from-100", "until-200"]
    assert at(200) == ["always", "from-100"]
    with pytest.raises(ValueError, match="finite"):
        at(float("nan"))


def test_a_said_span_is_half_open_and_leaves_out_points_without_a_time(
    store: RetrievalStore,
) -> None:
    store.upsert(
        [
            mk("t50", said_at=50.0),
            mk("t100", said_at=100.0),
            mk("t199", said_at=199.5),
            mk("t200", said_at=200.0),
            mk("never"),  # written before points had an event time
            mk("other-ns", "ns-b", said_at=150.0),
        ]
    )
    q = unit(np.random.default_rng(4))
    sp = SparseVector((1, 7), (1.0, 0.5))

    def said(lo: float | None, hi: float | None) -> list[str]:
        hits = store.search("ns-a", q, sp, said_from=lo, said_until=hi)
        assert all(h.payload.said_at is not None for h in hits)
        return sorted(ids(hits))

    assert said(100, 200) == ["t100", "t199"]
    assert said(None, 100) == ["t50"]
    assert said(199.5, None) == ["t199", "t200"]
    assert sorted(ids(store.search("ns-a", q, sp))) == ["never", "t100", "t199", "t200", "t50"]
    (got,) = store.get("ns-a", ["t199"])
    assert got.payload.said_at == 199.5
    with pytest.raises(ValueError, match="finite"):
        said(float("inf"), None)


def test_sparse_search_is_bm25_with_namespace_idf(store: RetrievalStore) -> None:
    enc = BM25Encoder()
    docs_b = {"b1": "the user owns a red bicycle", "b2": "the user likes green tea"}
    store.upsert([mk(k, "ns-b", sparse=enc.encode_document(t), text=t) for k, t in docs_b.items()])
    query = enc.encode_query("red bicycle")
    before = store.sparse_search("ns-b", query)
    assert ids(before) == ["b1"]
    # Another tenant full of "bicycle" must not change ns-b's IDF, hence its scores.
    store.upsert(
        [mk(f"a{i}", "ns-a", sparse=enc.encode_document("bicycle bicycle red")) for i in range(30)]
    )
    after = store.sparse_search("ns-b", query)
    assert ids(after) == ["b1"]
    assert after[0].score == pytest.approx(before[0].score, rel=1e-5)
    # BM25 = sum over query terms of idf(term) * saturated tf; N=2, df=1 for both terms.
    idf = np.log(1 + (2 - 1 + 0.5) / (1 + 0.5))
    doc = enc.encode_document(docs_b["b1"]).as_dict()
    expected = sum(idf * doc[i] for i in query.indices)
    assert after[0].score == pytest.approx(expected, rel=1e-4)
    assert after[0].sparse is not None and after[0].dense is None
    assert store.sparse_search("ns-b", SparseVector()) == []


HYBRID_CORPUS = [
    "The user prefers dark roast coffee in the morning",
    "The user is allergic to peanuts",
    "The user's daughter plays the violin",
    "Project Falcon ships on the first of March",
    "The user lives in Lisbon near the river",
    "The user dislikes long meetings after lunch",
    "The team uses Kafka for the event log",
    "The user's favourite book is Dune",
    "The user runs five kilometres every Sunday",
    "The user's laptop is a ThinkPad X1 Carbon",
    "The user's locker combination is 4471-ZQ",
    "The user drinks green tea in the afternoon",
    "The user's manager is called Priya",
    "The user prefers morning meetings to afternoon ones",
    "The quarterly report is due next Friday",
    "The user learns Japanese on weekday evenings",
]


def test_hybrid_search_ranks_exact_keyword_match_first(open_store: OpenStore) -> None:
    embedder = HashingEmbedder(128)
    enc = BM25Encoder()
    store = open_store(CollectionSpec.for_models(embedder, enc))
    vectors = embedder.embed(HYBRID_CORPUS)
    store.upsert(
        [
            mk(f"m{i}", dense=vectors[i], sparse=enc.encode_document(t), text=t)
            for i, t in enumerate(HYBRID_CORPUS)
        ]
    )
    # Noise in other tenants, including the exact keyword, must not interfere.
    store.upsert(
        [
            mk(f"x{i}", "ns-other", dense=vectors[10], sparse=enc.encode_document(t), text=t)
            for i, t in enumerate(["locker combination 4471-ZQ"] * 5)
        ]
    )
    query = "what was the 4471-ZQ code again?"
    hits = store.search("ns-a", embedder.embed([query])[0], enc.encode_query(query), limit=5)
    assert hits[0].memory_id == "m10"
    top = hits[0]
    assert top.dense is not None and top.sparse is not None
    assert top.sparse.rank == 1
    assert top.score == pytest.approx(1 / (60 + top.dense.rank) + 1 / 61)
    assert top.explain()["sparse_rank"] == 1
    assert all(h.namespace == "ns-a" for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_fuse_rrf_arithmetic() -> None:
    dense = [RawHit("a", 0.9), RawHit("b", 0.8), RawHit("c", 0.7)]
    sparse = [RawHit("c", 5.0), RawHit("d", 4.0)]
    fused = fuse_rrf(dense, sparse, limit=10)
    assert [r.point_id for r in fused] == ["c", "a", "b", "d"]
    c = fused[0]
    assert c.score == pytest.approx(1 / 63 + 1 / 61)
    assert c.dense is not None and c.sparse is not None
    assert (c.dense.rank, c.dense.score, c.sparse.rank, c.sparse.score) == (3, 0.7, 1, 5.0)
    # a (dense rank 1), then b (dense rank 2) and d (sparse rank 2) tied, broken by id.
    assert [r.score for r in fused[1:]] == pytest.approx([1 / 61, 1 / 62, 1 / 62])
    assert [r.point_id for r in fuse_rrf(dense, sparse, limit=2)] == ["c", "a"]
    assert fuse_rrf([], [], limit=3) == []


# --- tenant isolation, at scale and at random ------------------------------------------

N_NAMESPACES = 60
N_POINTS = 2000
VOCAB = 40
TIERS = ("core", "working", "peripheral")
CATEGORIES = ("fact", "preference", "decision")


class Dataset:
    def __init__(self, seed: int = 11) -> None:
        rng = np.random.default_rng(seed)
        self.namespaces = [f"tenant-{i:02d}" for i in range(N_NAMESPACES)]
        self.vectors = rng.standard_normal((N_POINTS, DIM))
        self.vectors /= np.linalg.norm(self.vectors, axis=1, keepdims=True)
        pick = random.Random(seed)
        self.points: list[MemoryPoint] = []
        for i in range(N_POINTS):
            terms = sorted(pick.sample(range(VOCAB), pick.randint(1, 5)))
            self.points.append(
                MemoryPoint.build(
                    memory_id=f"m{i % 97}-{i}",  # ids repeat across tenants on purpose
                    namespace=self.namespaces[pick.randrange(N_NAMESPACES)],
                    dense=self.vectors[i],
                    sparse=SparseVector(tuple(terms), tuple(1.0 for _ in terms)),
                    payload=MemoryPayload(
                        text=f"point {i}",
                        status=pick.choice(STATUSES),
                        tier=pick.choice(TIERS),
                        category=pick.choice(CATEGORIES),
                        valid_from=pick.choice([None, 100.0, 200.0]),
                        valid_until=pick.choice([None, 150.0, 300.0]),
                    ),
                    position=LogPosition(i % 3, i),
                )
            )

    def matches(self, p: MemoryPoint, ns: str, filters: dict[str, Any]) -> bool:
        pl = p.payload
        t = filters.get("valid_at")
        statuses = filters.get("statuses", ("active",))  # the store's default
        return (
            p.namespace == ns
            and (statuses is None or pl.status in statuses)
            and (filters.get("tiers") is None or pl.tier in filters["tiers"])
            and (filters.get("categories") is None or pl.category in filters["categories"])
            and (
                t is None
                or (
                    (pl.valid_from is None or pl.valid_from <= t)
                    and (pl.valid_until is None or t < pl.valid_until)
                )
            )
        )


DATASET = Dataset()


@pytest.fixture(scope="module")
def populated(module_open_store: OpenStore) -> RetrievalStore:
    store = module_open_store(SPEC)
    store.upsert(DATASET.points)
    return store


def test_populated_counts_match(populated: RetrievalStore) -> None:
    for ns in DATASET.namespaces[:10]:
        assert populated.count(ns) == sum(p.namespace == ns for p in DATASET.points)
        assert {p.memory_id for p in populated.all(ns)} == {
            p.memory_id for p in DATASET.points if p.namespace == ns
        }


filters_st = st.fixed_dictionaries(
    {},
    optional={
        "statuses": st.one_of(st.none(), st.lists(st.sampled_from(STATUSES), min_size=1)),
        "tiers": st.lists(st.sampled_from(TIERS), min_size=1),
        "categories": st.lists(st.sampled_from(CATEGORIES), min_size=1),
        "valid_at": st.sampled_from([50.0, 100.0, 150.0, 250.0, 400.0]),
    },
)


# No shrinking: each example costs three searches on two thousand points.
@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(
    ns_index=st.integers(0, N_NAMESPACES),  # N_NAMESPACES = a tenant with no points
    seed=st.integers(0, 2**32 - 1),
    terms=st.lists(st.integers(0, VOCAB + 5), min_size=1, max_size=4, unique=True),
    limit=st.integers(1, 30),
    filters=filters_st,
)
def test_searches_never_leave_the_namespace(
    populated: RetrievalStore,
    ns_index: int,
    seed: int,
    terms: list[int],
    limit: int,
    filters: dict[str, Any],
) -> None:
    ns = DATASET.namespaces[ns_index] if ns_index < N_NAMESPACES else "tenant-empty"
    query = unit(np.random.default_rng(seed))
    sparse = SparseVector(tuple(sorted(terms)), tuple(1.0 for _ in terms))
    allowed = {p.memory_id: p for p in DATASET.points if DATASET.matches(p, ns, filters)}
    dense_hits = populated.dense_search(ns, query, limit=limit, **filters)
    sparse_hits = populated.sparse_search(ns, sparse, limit=limit, **filters)
    hybrid_hits = populated.search(ns, query, sparse, limit=limit, **filters)
    for hit in (*dense_hits, *sparse_hits, *hybrid_hits):
        assert hit.namespace == ns
        assert hit.memory_id in allowed
        assert allowed[hit.memory_id].position == hit.position
    # Dense search is exact here: it must find the brute-force top-k of the allowed set.
    assert len(dense_hits) == min(limit, len(allowed))
    if allowed:
        scores = sorted((float(np.dot(p.dense, query)) for p in allowed.values()), reverse=True)[
            : len(dense_hits)
        ]
        np.testing.assert_allclose([h.score for h in dense_hits], scores, atol=1e-4)
    wanted_terms = set(terms)
    assert len(sparse_hits) == min(
        limit, sum(bool(wanted_terms & set(p.sparse.indices)) for p in allowed.values())
    )


def test_get_and_delete_cannot_cross_namespaces(populated: RetrievalStore) -> None:
    p = DATASET.points[0]
    other = next(ns for ns in DATASET.namespaces if ns != p.namespace)
    assert populated.get(other, [p.memory_id]) == []
    populated.delete(other, [p.memory_id])
    assert [g.memory_id for g in populated.get(p.namespace, [p.memory_id])] == [p.memory_id]


# --- checkpoints -----------------------------------------------------------------------


def test_checkpoint_only_moves_forward(store: RetrievalStore) -> None:
    assert store.checkpoint(0) is None
    assert store.advance_checkpoint(0, 5) == 5
    assert store.advance_checkpoint(0, 3) == 5
    assert store.checkpoint(0) == 5
    assert store.advance_checkpoint(0, 5) == 5
    assert store.advance_checkpoint(0, 12) == 12
    assert store.checkpoint(1) is None
    assert store.advance_checkpoint(1, 0) == 0
    assert store.checkpoint(0) == 12
    with pytest.raises(ValueError):
        store.advance_checkpoint(-1, 3)
    with pytest.raises(ValueError):
        store.advance_checkpoint(0, -3)


def test_checkpoint_survives_close_and_reopen(open_store: OpenStore) -> None:
    first = open_store(SPEC)
    first.upsert([mk("m1")])
    first.advance_checkpoint(2, 1234)
    first.close()
    second = open_store(SPEC)
    assert second.checkpoint(2) == 1234
    assert second.advance_checkpoint(2, 1000) == 1234


def test_checkpoints_are_invisible_to_reads(store: RetrievalStore) -> None:
    store.advance_checkpoint(0, 7)
    store.upsert([mk("m1")])
    assert store.count("ns-a") == 1
    assert [p.memory_id for p in store.all("ns-a")] == ["m1"]
    q = unit(np.random.default_rng(0))
    assert ids(store.search("ns-a", q, SparseVector((1,), (1.0,)), statuses=None)) == ["m1"]


def test_replaying_a_batch_is_harmless(store: RetrievalStore) -> None:
    batch = [mk(f"m{i}", offset=i) for i in range(5)]
    store.upsert(batch)
    store.advance_checkpoint(0, 4)
    # A crash before the checkpoint was read back replays the batch: same state.
    store.upsert([replace(p) for p in batch])
    store.advance_checkpoint(0, 4)
    assert store.count("ns-a") == 5
    assert store.checkpoint(0) == 4
