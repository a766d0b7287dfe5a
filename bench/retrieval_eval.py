"""Evidence recall@k on the shipped evaluation set: memstream's recall over memories built
by the write path, against plain BM25 and dense-only search over the raw turns.

Evidence recall@k of a question: the share of its evidence turns that are among the
source turns of the top k returned memories (or among the top k turns, for baselines).
No LLM is in the loop: the rule extractor and the offline hashing embedder.
"""

from __future__ import annotations

import math
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from bench.eval_data import load_conversations, load_questions
from bench.offline_pipeline import run_offline
from consumers.recall import RecallService
from core.embedding import HashingEmbedder
from core.sparse import BM25Encoder
from core.tokens import tokenize
from projections.port import LogRecord
from projections.qdrant_projection import QdrantProjection
from projections.retrieval import CollectionSpec, EdgeRetrievalStore
from schemas.envelope import encode

KS = (5, 10, 20)
Ranker = Callable[[dict[str, Any]], list[list[str]]]  # question -> turn-id groups, best first


@dataclass
class Scores:
    per_k: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    per_kind: dict[str, dict[int, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )

    def add(self, kind: str, evidence: set[str], groups: list[list[str]]) -> None:
        for k in KS:
            found = {t for g in groups[:k] for t in g}
            value = len(evidence & found) / len(evidence)
            self.per_k[k].append(value)
            self.per_kind[kind][k].append(value)

    def mean(self, k: int, kind: str | None = None) -> float:
        values = self.per_k[k] if kind is None else self.per_kind[kind][k]
        return float(np.mean(values)) if values else 0.0


class BM25Turns:
    """Plain Okapi BM25 (k1 1.2, b 0.75) over one namespace's raw turns."""

    def __init__(self, turns: Sequence[dict[str, Any]]) -> None:
        self.ids = [t["turn_id"] for t in turns]
        self.docs = [Counter(tokenize(t["text"])) for t in turns]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / max(len(self.lengths), 1)
        df: Counter[str] = Counter(term for d in self.docs for term in d)
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}

    def rank(self, query: str, k: int) -> list[str]:
        terms = tokenize(query)
        scores = []
        for i, doc in enumerate(self.docs):
            s = 0.0
            norm = 1.2 * (1 - 0.75 + 0.75 * self.lengths[i] / self.avg)
            for term in terms:
                tf = doc.get(term, 0)
                if tf:
                    s += self.idf[term] * tf * 2.2 / (tf + norm)
            scores.append((-s, i))
        return [self.ids[i] for s, i in sorted(scores)[:k] if s < 0]


class DenseTurns:
    def __init__(self, turns: Sequence[dict[str, Any]], embedder: HashingEmbedder) -> None:
        self.ids = [t["turn_id"] for t in turns]
        self.matrix = embedder.embed([t["text"] for t in turns])
        self.embedder = embedder

    def rank(self, query: str, k: int) -> list[str]:
        scores = self.matrix @ self.embedder.embed([query])[0]
        order = np.argsort(-scores, kind="stable")[:k]
        return [self.ids[i] for i in order]


def _question_time(q: dict[str, Any], last_turn: dict[str, datetime]) -> datetime:
    if q.get("as_of"):
        return datetime.fromisoformat(q["as_of"])
    return last_turn[q["namespace"]] + timedelta(days=1)


def evaluate() -> dict[str, Any]:
    turns = load_conversations()
    questions = load_questions()
    by_ns: dict[str, list[dict[str, Any]]] = defaultdict(list)
    last_turn: dict[str, datetime] = {}
    for t in turns:
        by_ns[t["namespace"]].append(t)
        at = datetime.fromisoformat(t["occurred_at"])
        last_turn[t["namespace"]] = max(last_turn.get(t["namespace"], at), at)

    run = run_offline(turns)
    embedder, sparse = HashingEmbedder(), BM25Encoder()
    store = EdgeRetrievalStore(
        tempfile.mkdtemp(prefix="memstream-eval-"), CollectionSpec.for_models(embedder, sparse)
    )
    projection = QdrantProjection(store, "eval.memory.log", embedder, sparse)
    projection.apply(
        [LogRecord("eval.memory.log", 0, i, e.key, encode(e)) for i, e in enumerate(run.events)]
    )
    service = RecallService(store, embedder, sparse)
    bm25 = {ns: BM25Turns(ts) for ns, ts in by_ns.items()}
    dense = {ns: DenseTurns(ts, embedder) for ns, ts in by_ns.items()}

    results = {"memstream": Scores(), "bm25_turns": Scores(), "dense_turns": Scores()}
    for q in questions:
        evidence = set(q["evidence_turn_ids"])
        when = _question_time(q, last_turn)
        recalled = service.recall_sync(
            q["namespace"],
            q["query"],
            k=max(KS),
            now=when,
            as_of=datetime.fromisoformat(q["as_of"]) if q.get("as_of") else None,
        )
        results["memstream"].add(q["kind"], evidence, [r.source_turn_ids for r in recalled.results])
        results["bm25_turns"].add(
            q["kind"], evidence, [[t] for t in bm25[q["namespace"]].rank(q["query"], max(KS))]
        )
        results["dense_turns"].add(
            q["kind"], evidence, [[t] for t in dense[q["namespace"]].rank(q["query"], max(KS))]
        )
    store.close()
    kinds = sorted({q["kind"] for q in questions})
    return {
        "questions": len(questions),
        "memories": sum(1 for e in run.events if e.type == "MemoryCreated"),
        "turns": len(turns),
        "recall": {name: {f"@{k}": round(s.mean(k), 4) for k in KS} for name, s in results.items()},
        "by_kind": {
            name: {kind: {f"@{k}": round(s.mean(k, kind), 4) for k in KS} for kind in kinds}
            for name, s in results.items()
        },
    }


if __name__ == "__main__":
    import json

    print(json.dumps(evaluate(), indent=2))
