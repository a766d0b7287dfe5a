"""Two or more embedders as one: ``MEMSTREAM_EMBEDDER=wordllama:0.7+sentence-transformers:0.3``.

Each part's unit vector is scaled by the square root of its weight and the parts are laid
side by side, so the cosine of two combined vectors is the weighted sum of the parts'
cosines (weights summing to 1 keep the rows unit length). One vector per memory: the store,
the projection and recall need nothing new.

Why: on short chat turns a trained sentence model matches wordings a static embedding
misses, while on long turns the static one did better (``python -m bench.retrieval_eval``
with all-MiniLM-L6-v2 alone: the own set @10 0.824 -> 0.882, BEAM dev 0.682 -> 0.651;
WordLlama 0.7 + MiniLM 0.3: own 0.850, BEAM dev 0.686). The model costs what the static
embedding does not (about 14 ms a question and 24 source texts a second on two cores
against 0.1 ms and ~550; the realistic ingest benchmark at 19 turns/s against 127), so the
combination is a setting, not the default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from memstream.core.embedding import Embedder, Matrix, normalize_rows


class CombinedEmbedder:
    """``parts``: (embedder, weight) pairs; weights are positive and normalised to sum 1."""

    def __init__(self, parts: Sequence[tuple[Embedder, float]]) -> None:
        if len(parts) < 2:
            raise ValueError("a combination needs two embedders or more")
        if any(not w > 0 for _, w in parts):
            raise ValueError("every part's weight must be positive")
        total = sum(w for _, w in parts)
        self._parts = [(e, w / total) for e, w in parts]

    @property
    def name(self) -> str:
        # the weights exactly (repr round-trips a float): the collection is named by this, and
        # two weightings rounded to one name would put two recipes' vectors in one collection
        return "+".join(f"{e.name}x{w!r}" for e, w in self._parts)

    @property
    def version(self) -> str:
        return "+".join(e.version for e, _ in self._parts)

    @property
    def dim(self) -> int:
        return sum(e.dim for e, _ in self._parts)

    @property
    def weights(self) -> tuple[float, ...]:
        return tuple(w for _, w in self._parts)

    def embed(self, texts: Sequence[str]) -> Matrix:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        blocks = [normalize_rows(e.embed(texts)) * np.float32(np.sqrt(w)) for e, w in self._parts]
        # a part that gives a zero row (no known word) leaves the others' share as it is
        return normalize_rows(np.hstack(blocks))


def parse_parts(spec: str) -> list[tuple[str, float]]:
    """``"wordllama:0.7+st:0.3"`` -> [("wordllama", 0.7), ("st", 0.3)]; a part without a
    weight weighs 1. ValueError names the part that does not parse."""
    out: list[tuple[str, float]] = []
    for part in spec.split("+"):
        kind, _, weight = part.strip().partition(":")
        if not kind.strip():
            raise ValueError(f"empty embedder in {spec!r}")
        try:
            w = float(weight) if weight.strip() else 1.0
        except ValueError:
            raise ValueError(f"weight {weight!r} of {kind!r} in {spec!r} is not a number") from None
        if not w > 0:
            raise ValueError(f"weight of {kind!r} in {spec!r} must be positive")
        out.append((kind.strip(), w))
    return out


def combined(spec: str, build: Callable[[str], Embedder]) -> CombinedEmbedder:
    """The combination ``spec`` names, each part built by ``build(kind)``."""
    return CombinedEmbedder([(build(kind), w) for kind, w in parse_parts(spec)])
