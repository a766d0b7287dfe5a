"""The recall service: gate, intent, hybrid search in the store, rescoring, MMR, confidence.

The store does the tenant filtering (every search is scoped to one namespace by the
store itself); the pure scoring core (``core.scoring`` and friends) decides the order
and explains it. Every recall publishes ``MemoryAccessed`` so access tracking,
Q-learning and gap reports see it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from core.embedding import Embedder
from core.memory_state import MemoryState, from_json
from core.sparse import BM25Encoder
from projections.retrieval import Hit, RetrievalStore
from schemas._fields import utc_now

UsageLookup = Callable[[str, Sequence[str]], dict[str, tuple[int, datetime | None]]]
PairLookup = Callable[[str, Sequence[str]], dict[tuple[str, str], int]]


@dataclass(frozen=True, slots=True)
class RecallHitView:
    memory_id: str
    text: str
    score: float
    explain: dict[str, Any]
    source_turn_ids: list[str]
    category: str
    status: str
    created_at: str
    session_id: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "text": self.text,
            "score": self.score,
            "explain": self.explain,
            "source_turn_ids": self.source_turn_ids,
            "category": self.category,
            "status": self.status,
            "created_at": self.created_at,
            "session_id": self.session_id,
        }


@dataclass(frozen=True, slots=True)
class RecallResult:
    query_id: str
    namespace: str
    query: str
    results: list[RecallHitView]
    confidence: str
    intent: str
    skipped_reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "namespace": self.namespace,
            "query": self.query,
            "confidence": self.confidence,
            "intent": self.intent,
            "skipped_reason": self.skipped_reason,
            "results": [r.as_dict() for r in self.results],
        }


Publisher = Callable[[str, str, str, list[tuple[str, float]], datetime], Awaitable[None]]


class RecallService:
    def __init__(
        self,
        store: RetrievalStore,
        embedder: Embedder,
        sparse: BM25Encoder,
        *,
        usage: UsageLookup | None = None,
        pairs: PairLookup | None = None,
        publish: Publisher | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.sparse = sparse
        self.usage = usage
        self.pairs = pairs
        self.publish = publish

    async def recall(
        self,
        namespace: str,
        query: str,
        *,
        k: int = 10,
        as_of: datetime | None = None,
        include_superseded: bool = False,
        session_id: str | None = None,
        query_id: str | None = None,
        now: datetime | None = None,
        record: bool = True,
    ) -> RecallResult:
        result = await asyncio.to_thread(
            self.recall_sync,
            namespace,
            query,
            k=k,
            as_of=as_of,
            include_superseded=include_superseded,
            session_id=session_id,
            query_id=query_id,
            now=now,
        )
        if record and self.publish is not None and result.skipped_reason is None:
            await self.publish(
                namespace,
                result.query_id,
                query,
                [(r.memory_id, r.score) for r in result.results],
                now or utc_now(),
            )
        return result

    def recall_sync(
        self,
        namespace: str,
        query: str,
        *,
        k: int = 10,
        as_of: datetime | None = None,
        include_superseded: bool = False,
        session_id: str | None = None,
        query_id: str | None = None,
        now: datetime | None = None,
    ) -> RecallResult:
        from core import intent as intents
        from core import mmr as diversity
        from core import recall_gate, scoring

        qid = query_id or f"q-{uuid.uuid4().hex}"
        now = now or as_of or utc_now()
        gate = recall_gate.should_retrieve(query)
        if not gate.retrieve:
            return RecallResult(qid, namespace, query, [], "skipped", "none", gate.reason)
        intent = intents.classify(query, now=now)
        profile = intents.profile_for(intent)
        statuses: tuple[str, ...] | None = ("active",)
        if include_superseded or intent.include_superseded:
            statuses = ("active", "superseded")
        point_in_time = as_of or intent.point_in_time
        valid_at = point_in_time.timestamp() if point_in_time else None
        subqueries = intents.decompose(query) or [query]
        depth = max(profile.candidates, k * 4)
        rankings: list[list[str]] = []
        hits: dict[str, Hit] = {}
        for sub in subqueries:
            found = self.store.search(
                namespace,
                self.embedder.embed([sub])[0],
                self.sparse.encode_query(sub),
                limit=depth,
                statuses=statuses,
                valid_at=valid_at,
            )
            rankings.append([h.memory_id for h in found])
            for h in found:
                hits.setdefault(h.memory_id, h)
        fused = (
            intents.rrf_merge(rankings)
            if len(rankings) > 1
            else [(h, hits[h].score) for h in rankings[0]]
        )
        ids = [mid for mid, _ in fused]
        usage = self.usage(namespace, ids) if self.usage and ids else {}
        pair_counts = self.pairs(namespace, ids) if self.pairs and ids else {}
        states = {mid: from_json(hits[mid].payload.extra["state"]) for mid in ids}
        candidates = [
            _candidate(states[mid], hits[mid], relevance, usage.get(mid))
            for mid, relevance in fused
        ]
        context = scoring.ScoringContext(
            now=now,
            query_entities=tuple(intent.entities),
            session_id=session_id,
            co_activation=pair_counts,
        )
        scored = sorted(
            (scoring.score(c, context, profile) for c in candidates),
            key=lambda s: (-s.score, s.memory_id),
        )
        if scored:
            vectors = {mid: np.asarray(self.embedder.embed([states[mid].text])[0]) for mid in ids}
            scored = diversity.mmr(scored, vectors, lambda_=0.7, k=k)
        top = scored[:k]
        confidence = scoring.confidence(top)
        results = [
            RecallHitView(
                memory_id=s.memory_id,
                text=states[s.memory_id].text,
                score=round(s.score, 6),
                explain={
                    **s.explain,
                    **{f"store_{key}": v for key, v in hits[s.memory_id].explain().items()},
                },
                source_turn_ids=list(states[s.memory_id].source_turn_ids),
                category=states[s.memory_id].category,
                status=states[s.memory_id].status,
                created_at=states[s.memory_id].created_at.isoformat(),
                session_id=states[s.memory_id].session_id,
            )
            for s in top
        ]
        return RecallResult(
            qid,
            namespace,
            query,
            results,
            confidence,
            intent.kind,
            details={"subqueries": subqueries, "candidates": len(candidates)},
        )


def _candidate(
    state: MemoryState, hit: Hit, relevance: float, usage: tuple[int, datetime | None] | None
) -> Any:
    from core.scoring import Candidate

    count, last = usage or (0, None)
    return Candidate(
        memory_id=state.memory_id,
        text=state.text,
        relevance=relevance,
        dense_rank=hit.dense.rank if hit.dense else None,
        sparse_rank=hit.sparse.rank if hit.sparse else None,
        created_at=state.created_at,
        last_access=last,
        access_count=count,
        stability=state.stability,
        q_value=state.q_value,
        importance=state.importance,
        tier=state.tier,
        entities=state.entities,
        session_id=state.session_id,
        pinned=state.pinned,
        status=state.status,
        valid_from=state.valid_from,
        valid_until=state.valid_until,
    )
