"""BM25-style sparse vectors for the lexical retrieval channel.

A document becomes ``{token_index(token): saturated_tf}`` where::

    saturated_tf = tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avg_doc_len))

with k1=1.2, b=0.6 by default. The IDF factor is *not* in these values: the retrieval
store declares its sparse vector with Qdrant's IDF modifier, and Qdrant multiplies each
query term by ``ln(1 + (N - df + 0.5) / (df + 0.5))`` at search time. Both adapters scope
that corpus to the query's namespace (``IdfParams(corpus=...)``), so one tenant's
vocabulary never shifts another tenant's scores, and deletions take effect at once
(no stale IDF baked into stored vectors; nothing to re-encode when the corpus grows).
A query is one weight of 1.0 per distinct token, so the dot product is exactly BM25.

Token indices are the first 31 bits of blake2b, stable across processes and machines
(never Python's ``hash()``). Two tokens that collide are treated as one term; at the
vocabulary sizes of a memory store that is a handful of pairs in 2^31.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from memstream.core.tokens import STEMMING_TOKENIZER, Tokenizer

_INDEX_MASK = 0x7FFF_FFFF


@dataclass(frozen=True, slots=True)
class SparseVector:
    """Parallel index/value tuples, indices unique and ascending."""

    indices: tuple[int, ...] = ()
    values: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if len(self.indices) != len(self.values):
            raise ValueError("sparse vector needs as many values as indices")
        if any(b <= a for a, b in zip(self.indices, self.indices[1:], strict=False)):
            raise ValueError("sparse vector indices must be unique and ascending")

    @classmethod
    def from_mapping(cls, weights: dict[int, float]) -> SparseVector:
        items = sorted(weights.items())
        return cls(tuple(i for i, _ in items), tuple(float(v) for _, v in items))

    @classmethod
    def of(cls, indices: Iterable[int], values: Iterable[float]) -> SparseVector:
        """From unsorted pairs (e.g. read back from a store); duplicate indices are summed."""
        merged: dict[int, float] = {}
        for i, v in zip(indices, values, strict=True):
            merged[int(i)] = merged.get(int(i), 0.0) + float(v)
        return cls.from_mapping(merged)

    def __bool__(self) -> bool:
        return bool(self.indices)

    def as_dict(self) -> dict[int, float]:
        return dict(zip(self.indices, self.values, strict=True))


@lru_cache(maxsize=1 << 16)
def token_index(token: str) -> int:
    """Stable 31-bit index of a token (positive int32, what Qdrant sparse indices accept)."""
    digest = hashlib.blake2b(token.encode(), digest_size=4, person=b"memstream-bm25").digest()
    return int.from_bytes(digest, "big") & _INDEX_MASK


@dataclass(frozen=True, slots=True)
class BM25Encoder:
    """Documents -> saturated term frequencies; queries -> 1.0 per distinct term.

    ``avg_doc_len`` is a parameter rather than a corpus statistic so that encoding a
    memory never depends on what else is stored (projections must be rebuildable from
    the log alone). Memories are short claims; 16 tokens after stopword removal is the
    expected size. Changing any parameter changes ``version``, hence the collection.
    Version 2: the retrieval projection's documents are a memory's text plus its source
    turns' words (``projections.qdrant_projection.lexical_document``), so a collection
    built from text alone is rebuilt from the log rather than mixed.
    """

    k1: float = 1.2
    # less length normalisation than the usual 0.75: a document is the memory's text and
    # its source turns' words, often many times avg_doc_len, and a memory cut from a long
    # turn lost too much to one from a short turn (own / BEAM dev recall@10 0.8207 / 0.6625
    # at 0.75, 0.8236 / 0.6676 at 0.6; 0.5: 0.8236 / 0.6662, 0.3: 0.8236 / 0.6660, 0.9:
    # 0.8091 / 0.6544; python -m bench.retrieval_eval --dev --own)
    b: float = 0.6
    avg_doc_len: float = 16.0
    tokenizer: Tokenizer = STEMMING_TOKENIZER

    name: ClassVar[str] = "bm25"

    def __post_init__(self) -> None:
        if self.k1 < 0 or not 0.0 <= self.b <= 1.0 or self.avg_doc_len <= 0:
            raise ValueError("BM25 needs k1 >= 0, 0 <= b <= 1 and avg_doc_len > 0")

    @property
    def version(self) -> str:
        return f"2-k{self.k1:g}-b{self.b:g}-avg{self.avg_doc_len:g}-{self.tokenizer.version}"

    def encode_document(self, text: str) -> SparseVector:
        tokens = self.tokenizer(text)
        if not tokens:
            return SparseVector()
        tf: Counter[int] = Counter(token_index(t) for t in tokens)
        norm = self.k1 * (1.0 - self.b + self.b * len(tokens) / self.avg_doc_len)
        return SparseVector.from_mapping(
            {i: n * (self.k1 + 1.0) / (n + norm) for i, n in tf.items()}
        )

    def encode_query(self, text: str) -> SparseVector:
        return SparseVector.from_mapping(dict.fromkeys(map(token_index, self.tokenizer(text)), 1.0))

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        return [self.encode_document(t) for t in texts]
