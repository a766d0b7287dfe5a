"""Dense embedders: the offline hashing default, OpenAI through its real client (over a
mock transport), the optional sentence-transformers one, and configuration."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import numpy as np
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.embedding import (
    Embedder,
    EmbedderUnavailable,
    HashingEmbedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    blend_with_context,
    embedder_from_env,
    normalize_rows,
)

ROOT = Path(__file__).resolve().parents[2]


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


# --- hashing ------------------------------------------------------------------------------


def test_hashing_shape_dtype_and_unit_rows() -> None:
    e = HashingEmbedder()
    v = e.embed(["The user likes tea", "", "the of and", "東京"])
    assert isinstance(e, Embedder)
    assert (e.name, e.version, e.dim) == ("hashing", "1", 384)
    assert v.shape == (4, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-6)
    assert e.embed([]).shape == (0, 384)


def test_hashing_rejects_a_bare_string() -> None:
    with pytest.raises(TypeError):
        HashingEmbedder().embed("one text")  # type: ignore[arg-type]


def test_hashing_similar_texts_are_closer_than_unrelated() -> None:
    e = HashingEmbedder()
    a, b, c = e.embed(
        [
            "The user prefers dark roast coffee in the morning",
            "User likes dark-roasted coffee every morning",
            "The deployment pipeline publishes to Kafka topics",
        ]
    )
    assert cos(a, b) > 0.5
    assert cos(a, b) > cos(a, c) + 0.3


def test_hashing_word_order_matters_through_bigrams() -> None:
    e = HashingEmbedder()
    a, b, c = e.embed(["dog bites man", "man bites dog", "dog bites man"])
    assert cos(a, c) == pytest.approx(1.0)
    assert cos(a, b) < 0.999


def test_hashing_features() -> None:
    unigrams, bigrams, trigrams = HashingEmbedder().features("The cats sat")
    assert unigrams == ["u:cat", "u:sat"]
    assert bigrams == ["b:cat sat"]
    assert "c:#ca" in trigrams and "c:ts#" in trigrams


def test_hashing_is_deterministic_across_processes() -> None:
    texts = ["The user lives in Lisbon", "café 東京 2024"]
    here = HashingEmbedder(64).embed(texts)
    code = (
        "import sys, json; from memstream.core.embedding import HashingEmbedder;"
        f"print(json.dumps(HashingEmbedder(64).embed({texts!r}).tolist()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONHASHSEED": "987", "PATH": ""},
    )
    np.testing.assert_array_equal(np.asarray(json.loads(out.stdout), dtype=np.float32), here)


def test_hashing_dim_is_configurable() -> None:
    assert HashingEmbedder(128).embed(["x"]).shape == (1, 128)
    with pytest.raises(ValueError):
        HashingEmbedder(4)


@settings(max_examples=50)
@given(st.lists(st.text(max_size=80), max_size=5))
def test_hashing_rows_are_always_unit_and_finite(texts: list[str]) -> None:
    v = HashingEmbedder(64).embed(texts)
    assert v.shape == (len(texts), 64)
    assert np.isfinite(v).all()
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)


def test_normalize_rows_keeps_zero_rows_zero() -> None:
    out = normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])
    assert out.dtype == np.float32


# --- OpenAI through the real client ----------------------------------------------------------


class FakeEmbeddingsAPI:
    """Answers /embeddings like the API: shuffled order (index says which is which)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        assert request.url.path.endswith("/embeddings")
        body = json.loads(request.content)
        self.requests.append(body)
        data = []
        for i, text in enumerate(body["input"]):
            vec = [float(len(text) + 1)] + [1.0] * (self.dim - 1)  # not unit length
            data.append({"object": "embedding", "index": i, "embedding": vec})
        data.reverse()
        return httpx2.Response(
            200,
            json={
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            },
        )


def openai_client(api: FakeEmbeddingsAPI) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="test-key",
        base_url="http://fake-openai.test/v1",
        http_client=httpx2.Client(transport=httpx2.MockTransport(api)),
        max_retries=0,
    )


def test_openai_embedder_batches_orders_and_normalises() -> None:
    api = FakeEmbeddingsAPI(8)
    e = OpenAIEmbedder("text-embedding-3-small", dim=8, client=openai_client(api), batch_size=2)
    assert isinstance(e, Embedder)
    assert (e.name, e.dim) == ("openai-text-embedding-3-small", 8)
    v = e.embed(["a", "bbb", "", "cc", "d"])
    assert v.shape == (5, 8) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-6)
    # Row i belongs to text i although the API answered in reverse order.
    first = v[:, 0] / v[:, 1]
    np.testing.assert_allclose(first, [2, 4, 2, 3, 2], rtol=1e-6)
    assert [len(r["input"]) for r in api.requests] == [2, 2, 1]
    assert api.requests[0]["dimensions"] == 8
    assert api.requests[0]["model"] == "text-embedding-3-small"
    assert api.requests[1]["input"][0] == " "  # empty strings are not accepted by the API


def test_openai_embedder_native_dims_and_no_dimensions_for_old_models() -> None:
    api = FakeEmbeddingsAPI(1536)
    e = OpenAIEmbedder("text-embedding-ada-002", client=openai_client(api))
    assert e.dim == 1536
    e.embed(["x"])
    assert "dimensions" not in api.requests[0]
    with pytest.raises(ValueError, match="dim"):
        OpenAIEmbedder("some-unknown-model", client=openai_client(api))


def test_openai_embedder_rejects_wrong_sized_answers() -> None:
    api = FakeEmbeddingsAPI(4)
    e = OpenAIEmbedder("text-embedding-3-small", dim=8, client=openai_client(api))
    with pytest.raises(RuntimeError, match="dims"):
        e.embed(["x"])


def test_openai_without_key_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EmbedderUnavailable):
        OpenAIEmbedder()


# --- sentence-transformers and configuration -------------------------------------------------


def test_sentence_transformers_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails
    with pytest.raises(EmbedderUnavailable, match="pip install sentence-transformers"):
        SentenceTransformerEmbedder()


def test_embedder_from_env() -> None:
    assert isinstance(embedder_from_env({}), HashingEmbedder)
    assert embedder_from_env({"MEMSTREAM_EMBED_DIM": "128"}).dim == 128
    # A key alone never switches models (and collections).
    assert isinstance(embedder_from_env({"OPENAI_API_KEY": "sk-x"}), HashingEmbedder)
    with pytest.raises(ValueError, match="unknown"):
        embedder_from_env({"MEMSTREAM_EMBEDDER": "word2vec"})


def test_embedder_from_env_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    e = embedder_from_env(
        {
            "MEMSTREAM_EMBEDDER": "openai",
            "MEMSTREAM_EMBED_MODEL": "text-embedding-3-large",
            "MEMSTREAM_EMBED_DIM": "256",
        }
    )
    assert isinstance(e, OpenAIEmbedder)
    assert (e.name, e.dim) == ("openai-text-embedding-3-large", 256)


def test_embedder_for_builds_each_configured_kind() -> None:
    from memstream.core.embedding import EMBEDDERS, WordLlamaEmbedder, embedder_for

    assert "wordllama" in EMBEDDERS
    assert embedder_for("hashing", dim=64).dim == 64
    wl = embedder_for("wordllama")
    assert isinstance(wl, WordLlamaEmbedder) and wl.dim == 256
    vectors = wl.embed(["a fun indoor area for the kids", "a little safe haven to play", "tax"])
    assert vectors.shape == (3, 256) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    # a static embedding knows some meaning: the paraphrase is closer than the unrelated word
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    with pytest.raises(ValueError, match="one of"):
        embedder_for("word2vec")


def test_settings_choose_the_embedder_and_it_is_built_once() -> None:
    from memstream.infra.settings import load
    from memstream.projections.factory import embedder

    settings = load(env={"MEMSTREAM_EMBEDDER": "wordllama"})
    assert embedder(settings) is embedder(settings)
    assert embedder(settings).name.startswith("wordllama")
    # the defaults, chosen on the development data: WordLlama retrieves, hashing gates
    from memstream.projections.factory import gate_embedder

    assert embedder(load(env={})).name.startswith("wordllama")
    assert gate_embedder(load(env={})).name.startswith("hashing")
    same = load(env={"MEMSTREAM_EMBEDDER": "hashing"})
    assert gate_embedder(same) is embedder(same)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=5),
    st.floats(min_value=0, max_value=3),
)
def test_blend_with_context_gives_unit_rows_between_text_and_context(
    texts: list[str], weight: float
) -> None:
    emb = HashingEmbedder()
    a, b = emb.embed(texts), emb.embed([t[::-1] for t in texts])
    out = blend_with_context(a, b, weight)
    assert out.shape == a.shape and out.dtype == np.float32
    for row, x, y in zip(out, a, b, strict=True):
        norm = float(np.linalg.norm(row))
        assert norm == pytest.approx(1.0, abs=1e-5) or norm == 0.0
        if norm and np.linalg.norm(x):
            # never further from the text than the context is
            assert float(row @ x) >= float(y @ x) - 1e-5
    assert np.allclose(blend_with_context(a, b, 0.0), normalize_rows(a))
    with pytest.raises(ValueError, match="shapes differ"):
        blend_with_context(a, b[:, :10], weight)


def test_wordllama_rows_keep_the_callers_order_whatever_the_lengths() -> None:
    """Texts are embedded shortest first (less padding); each row is still its own text's
    vector, the one it gets alone."""
    from memstream.core.embedding import embedder_for

    wl = embedder_for("wordllama")
    summary = "facts summary (40 memories): " + "; ".join(
        f"Mia visited town {i}" for i in range(40)
    )
    texts = [summary, "tea", "Lena moved to Porto in May", "tea", "a rescue dog named Rex"]
    rows = wl.embed(texts)
    for text, row in zip(texts, rows, strict=True):
        assert row.tobytes() == wl.embed([text])[0].tobytes()
