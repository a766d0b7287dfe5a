"""Cosine similarity of embedding vectors, shared by the dream cycle and evolution."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray


def _unit(vectors: Sequence[NDArray[Any]]) -> NDArray[np.float64]:
    mat = np.asarray(np.stack([np.asarray(v, dtype=np.float64).ravel() for v in vectors]))
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    return np.asarray(mat / np.where(norms == 0.0, 1.0, norms), dtype=np.float64)


def similarity_matrix(vectors: Sequence[NDArray[Any]]) -> NDArray[np.float64]:
    """Cosine similarities of all pairs (zero vectors are similar to nothing)."""
    if not vectors:
        return np.zeros((0, 0))
    unit = _unit(vectors)
    return np.asarray(unit @ unit.T, dtype=np.float64)
