"""Cosine similarity with each vector's float64 form and norm computed once.

Recall compares the question with the same memory vectors recall after recall (the match
gate, standing instructions); converting and normalising both sides on every comparison
was a tenth of a recall. ``cosine(a, b) == cosine_normed(*normed(a), *normed(b))`` exactly:
the same float64 arithmetic in the same order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Normed = tuple[Any, float]  # (float64 vector, its Euclidean norm)


def normed(vector: Any) -> Normed:
    a = np.asarray(vector, dtype=np.float64).ravel()
    return a, float(np.linalg.norm(a))


def cosine_normed(a: Any, norm_a: float, b: Any, norm_b: float) -> float:
    norm = norm_a * norm_b
    return float(a @ b) / norm if a.size == b.size and norm > 0.0 and np.isfinite(norm) else 0.0


def cosine(a: Any, b: Any) -> float:
    return cosine_normed(*normed(a), *normed(b))
