"""BM25 sparse encoding: stable indices, saturation, length normalisation, query form."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.core.sparse import BM25Encoder, SparseVector, token_index
from memstream.core.tokens import Tokenizer

PINNED_COFFEE = 1198090908


def test_token_index_is_stable_31_bit_and_process_independent() -> None:
    # Pinned: a change here silently invalidates every stored sparse vector.
    assert token_index("coffee") == PINNED_COFFEE
    assert 0 <= token_index("coffee") < 2**31
    here = [token_index(t) for t in ("coffee", "tea", "東京")]
    code = "from memstream.core.sparse import token_index;print([token_index(t) for t in ('coffee','tea','東京')])"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.stdout.strip() == str(here)


def bm25(tf: int, dl: int, k1: float = 1.2, b: float = 0.6, avg: float = 16.0) -> float:
    return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avg))


def test_document_weights_follow_bm25_saturation() -> None:
    enc = BM25Encoder()
    vec = enc.encode_document("coffee coffee coffee tea").as_dict()
    assert vec[token_index("coffee")] == pytest.approx(bm25(3, 4))
    assert vec[token_index("tea")] == pytest.approx(bm25(1, 4))
    # Saturation: three occurrences weigh less than three times one.
    assert vec[token_index("coffee")] < 3 * vec[token_index("tea")]


def test_longer_documents_weigh_each_term_less() -> None:
    enc = BM25Encoder()
    short = enc.encode_document("coffee").as_dict()[token_index("coffee")]
    long = enc.encode_document("coffee " + " ".join(f"w{i}" for i in range(40)))
    assert long.as_dict()[token_index("coffee")] < short
    flat = BM25Encoder(b=0.0)  # no length normalisation
    assert flat.encode_document("coffee tea").as_dict()[token_index("coffee")] == pytest.approx(
        flat.encode_document("coffee").as_dict()[token_index("coffee")]
    )


def test_documents_and_queries_share_the_stemming_tokenizer() -> None:
    enc = BM25Encoder()
    doc = enc.encode_document("The user prefers morning meetings")
    query = enc.encode_query("meeting preference?")
    assert set(query.indices) & set(doc.indices)  # "meet" matches
    assert query.values == (1.0,) * len(query.indices)


def test_query_weights_each_distinct_term_once() -> None:
    q = BM25Encoder().encode_query("tea tea TEA coffee")
    assert len(q.indices) == 2
    assert set(q.values) == {1.0}


def test_empty_text_gives_empty_vector() -> None:
    enc = BM25Encoder()
    assert not enc.encode_document("the of and")
    assert not enc.encode_query("")
    assert enc.encode_documents(["", "tea"])[1]


def test_version_changes_with_parameters() -> None:
    versions = {
        BM25Encoder().version,
        BM25Encoder(k1=1.5).version,
        BM25Encoder(b=0.5).version,
        BM25Encoder(avg_doc_len=32).version,
        BM25Encoder(tokenizer=Tokenizer()).version,
    }
    assert len(versions) == 5


def test_invalid_parameters() -> None:
    with pytest.raises(ValueError):
        BM25Encoder(b=1.5)
    with pytest.raises(ValueError):
        BM25Encoder(avg_doc_len=0)


def test_sparse_vector_validation_and_merging() -> None:
    with pytest.raises(ValueError):
        SparseVector((1, 2), (1.0,))
    with pytest.raises(ValueError):
        SparseVector((2, 1), (1.0, 1.0))
    assert SparseVector.of([5, 1, 5], [1.0, 2.0, 3.0]) == SparseVector((1, 5), (2.0, 4.0))
    assert not SparseVector()


@given(st.text(max_size=300))
def test_encoded_vectors_are_valid(text: str) -> None:
    vec = BM25Encoder().encode_document(text)
    assert list(vec.indices) == sorted(set(vec.indices))
    assert all(0 <= i < 2**31 for i in vec.indices)
    assert all(0 < v < 1.2 + 1 for v in vec.values)
