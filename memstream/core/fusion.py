"""One relevance per candidate from the two retrieval channels, and from the parts of a
compound question.

``convex_fusion`` combines the channels' *scores* rather than their ranks::

    relevance = alpha * max(cos, 0) / best_cos + (1 - alpha) * bm25 / best_bm25

each channel normalised by its best score in the candidate set (0 is the theoretical
minimum of both once negative cosines are clipped: an unrelated text), a candidate missing
from a channel counting 0 there, ``alpha = 0.5`` (neither channel is trusted more).
Reciprocal rank fusion, which the store uses to pick the candidates, throws the scores
away: with its ``k = 60`` the 1st and the 20th candidate differ by a quarter, whether the
1st matched every word of the query or barely more than the 20th. Measured on the shipped
evaluation set (``bench/retrieval_eval.py``, rule extractor, hashing embedder), ordering the
same candidates by this fusion instead of by RRF raised evidence recall@5 by about 0.05
(0.47 to 0.52) and @10 by 0.03, left @20 as it was, and any ``alpha`` in [0.4, 0.6] stayed
within 0.04 of that at k=5 and 0.01 at k=10. Bruch et al. ("An Analysis of Fusion Functions
for Hybrid Retrieval", 2023) report the same: a convex combination of normalised scores
beats RRF and is not sensitive to its weight.

``fuse_parts`` fuses the parts of a decomposed question: every part's channel scores are
normalised by the best over *all* parts, and a memory keeps its best part's relevance, since
one memory usually answers one part ("Where does Ana live, and what does she do?"). One
normalisation keeps a part that matches nothing well from lifting its best match to the
top: "... in order? Mention ONLY and ONLY three items." is split in two, and with each part
normalised by its own best (the earlier rule) whatever shared a word with
"items" tied with the best answer to the real question. On BEAM's development split
(event ordering questions all end like that) turn-budgeted evidence recall@10 rose from
0.467 to 0.471 and @20 from 0.541 to 0.553 (the own set: within 0.002).

Ties go to the memory id, so the order never depends on the order of the input.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

DEFAULT_ALPHA: Final = 0.5


def _clean(x: float) -> float:
    """Negative, NaN and infinite channel scores count as no match."""
    return x if x > 0.0 and math.isfinite(x) else 0.0


def convex_fusion(
    candidates: Iterable[str],
    dense: Mapping[str, float],
    sparse: Mapping[str, float],
    alpha: float = DEFAULT_ALPHA,
    *,
    best_dense: float | None = None,
    best_sparse: float | None = None,
) -> dict[str, float]:
    """``candidate -> relevance`` in [0, 1]; ``dense`` and ``sparse`` hold the raw channel
    scores of the candidates found in each channel (cosine, BM25). ``best_*`` override the
    normalisers (default: the best of the candidates; never below it)."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha must be in [0, 1]")
    ids = list(dict.fromkeys(candidates))
    d = {m: _clean(dense.get(m, 0.0)) for m in ids}
    s = {m: _clean(sparse.get(m, 0.0)) for m in ids}
    best_d = max([*d.values(), _clean(best_dense or 0.0)], default=0.0)
    best_s = max([*s.values(), _clean(best_sparse or 0.0)], default=0.0)
    return {
        m: (alpha * d[m] / best_d if best_d > 0.0 else 0.0)
        + ((1.0 - alpha) * s[m] / best_s if best_s > 0.0 else 0.0)
        for m in ids
    }


def ranked(relevance: Mapping[str, float]) -> list[tuple[str, float]]:
    """Best first, ties by id."""
    return sorted(relevance.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a decomposed question: its candidates and their raw channel scores."""

    candidates: Sequence[str]
    dense: Mapping[str, float]
    sparse: Mapping[str, float]


def fuse_parts(parts: Sequence[Part], alpha: float = DEFAULT_ALPHA) -> list[tuple[str, float]]:
    """Each memory's best relevance over the parts, every part normalised by the best
    channel scores over all of them; best first, ties by id."""
    best_d = max((_clean(v) for p in parts for v in p.dense.values()), default=0.0)
    best_s = max((_clean(v) for p in parts for v in p.sparse.values()), default=0.0)
    best: dict[str, float] = {}
    for part in parts:
        fused = convex_fusion(
            part.candidates, part.dense, part.sparse, alpha, best_dense=best_d, best_sparse=best_s
        )
        for m, v in fused.items():
            if v > best.get(m, -1.0):
                best[m] = v
    return ranked(best)
