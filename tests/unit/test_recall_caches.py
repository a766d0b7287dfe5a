"""Recall's kept values answer what recomputing them answers: the store's kept payloads
never outlive a write (core of the edge store, projections/retrieval/payload_cache.py), the
cosine with kept norms is the cosine (core/cosine.py), and OpenBLAS limited to one thread
gives the same products (infra/blas.py)."""

from __future__ import annotations

import uuid

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.cosine import cosine, cosine_normed, normed
from memstream.infra.blas import limit_blas_threads
from memstream.projections.retrieval.payload_cache import PayloadCache, int_id


def _old_cosine(a: object, b: object) -> float:
    """recall's cosine before the norms were kept."""
    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if a.size == b.size and norm > 0.0 and np.isfinite(norm) else 0.0


vectors = st.lists(st.floats(-1e3, 1e3, allow_nan=False, width=32), min_size=1, max_size=12).map(
    lambda xs: np.asarray(xs, dtype=np.float32)
)


@settings(max_examples=200, deadline=None)
@given(vectors, vectors)
def test_cosine_with_kept_norms_is_the_cosine(a: np.ndarray, b: np.ndarray) -> None:
    assert cosine(a, b) == _old_cosine(a, b)
    assert cosine_normed(*normed(a), *normed(b)) == _old_cosine(a, b)


def test_int_id_is_the_uuid_integer() -> None:
    pid = str(uuid.uuid4())
    assert int_id(pid) == uuid.UUID(pid).int


def test_a_write_drops_kept_payloads_and_a_read_across_a_write_is_not_kept() -> None:
    cache = PayloadCache()
    found, missing, epoch = cache.get([1, 2])
    assert found == {} and missing == [1, 2]
    cache.keep({1: {"text": "old"}, 2: {"text": "two"}}, epoch)
    assert cache.get([1, 2])[0] == {1: {"text": "old"}, 2: {"text": "two"}}
    # a read that started before a write and ended after it keeps nothing
    _found, _missing, before = cache.get([3])
    with cache.writing([1]):
        assert cache.get([1])[0] == {}  # dropped as the write starts
        _f, _m, during = cache.get([1])
        assert during is None  # nothing read while a write is under way is kept
        cache.keep({1: {"text": "read mid-write"}}, during)
    cache.keep({3: {"text": "read before"}}, before)
    assert cache.get([1, 2, 3])[0] == {2: {"text": "two"}}
    _f, _m, after = cache.get([1])
    cache.keep({1: {"text": "new"}}, after)
    assert cache.get([1])[0] == {1: {"text": "new"}}


def test_the_cache_is_bounded() -> None:
    cache = PayloadCache(size=3)
    _f, _m, epoch = cache.get([])
    cache.keep({i: {"i": i} for i in range(5)}, epoch)
    assert sorted(cache.get(list(range(5)))[0]) == [2, 3, 4]


def test_one_blas_thread_gives_the_same_products() -> None:
    rng = np.random.default_rng(7)
    unit = rng.standard_normal((80, 384))
    before = unit @ unit.T, unit @ unit[0]
    assert limit_blas_threads(1)
    assert np.array_equal(unit @ unit.T, before[0]) and np.array_equal(unit @ unit[0], before[1])
    assert limit_blas_threads(0)  # leaves the setting alone
