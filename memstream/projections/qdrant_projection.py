"""The retrieval projection: the memory log folded into Qdrant points.

Each point carries the full memory state (``extra["state"]``) and the log position that
last wrote it; an event at or before that position is skipped, and each partition's
checkpoint only moves forward, so replays and duplicate deliveries leave the store as is.
Vectors are recomputed only when a memory's text (or source text) changes.

The lexical (sparse) vector indexes the memory's text *and* the words of the turns it was
extracted from (``source_text`` in the evidence of ``MemoryCreated`` / ``MemoryUpdated``,
kept on the point as ``extra["source_text"]``): a memory is one sentence cut from a turn,
and questions use the turn's other words. The dense vector and everything shown stay the
memory's own text. Measured on BEAM's development split (``bench/retrieval_eval.py``),
turn-budgeted evidence recall@10 went from 0.421 to 0.462 and on the own set from 0.624 to
0.631.

The dense vector is the memory's text blended with its source text (``CONTEXT_WEIGHT``):
a question often paraphrases the turn rather than the sentence cut from it. Chosen on the
development data (``python -m bench.retrieval_eval --dev --own``, weights 0, 0.3, 0.6, 1):
recall@10 0.646 -> 0.651 on BEAM dev and 0.750 -> 0.767 on the own set at 0.6, @5 0.553 ->
0.582 and 0.620 -> 0.646. What is shown stays the memory's own text.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import orjson

from memstream.core.embedding import Embedder, Matrix, blend_with_context
from memstream.core.memory_state import MemoryState, apply, from_json, memory_ids_of, to_json
from memstream.core.shorten import cut_at_word
from memstream.core.sparse import BM25Encoder
from memstream.projections.port import ApplyStats, LogRecord, Projection
from memstream.projections.retrieval import (
    CollectionSpec,
    LogPosition,
    MemoryPayload,
    MemoryPoint,
    RetrievalStore,
)
from memstream.schemas.envelope import DEFAULT_LIMITS, Envelope, Limits, decode
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import MEMORY_TYPES, MemoryCreated, MemoryUpdated

MEMORY_TYPE_NAMES = frozenset(cls.TYPE for cls in MEMORY_TYPES)  # type: ignore[attr-defined]
SOURCE_TEXT_MAX = 4000  # characters of source text one point keeps (updates add to it)
CONTEXT_WEIGHT = 0.6  # the source text's share of the dense vector (see the module doc)
# the source text's first characters the dense vector reads: the embedding's cost grows
# with the text, and on dev 1,000 did as well as all of it (recall@10 0.663 either way;
# 600: 0.657, 300: 0.662); the sparse vector still indexes all of it
CONTEXT_CHARS = 1000
# names the recipe of the stored points (their vectors, and since "said" their event time
# ``said_at``) in the collection's name, so a store filled by an older recipe is not
# searched with the new one: its replacement is filled from the log
DENSE_DOCUMENT = "ctx06-1k-said"


def collection_spec(embedder: Embedder, sparse: BM25Encoder) -> CollectionSpec:
    """The collection this projection fills for these models: named by them and by how it
    makes the dense vectors (``DENSE_DOCUMENT``)."""
    return CollectionSpec.for_models(embedder, sparse, dense_document=DENSE_DOCUMENT)


def source_text_after(before: str, env: Envelope[Any]) -> str:
    """The source text a point keeps after ``env``: a creation sets it, an update adds the
    new fact's turns (once), anything else leaves it."""
    p = env.payload
    if not isinstance(p, MemoryCreated | MemoryUpdated):
        return before
    added = p.evidence.get("source_text")
    if not isinstance(added, str) or not added:
        return "" if isinstance(p, MemoryCreated) else before
    if isinstance(p, MemoryCreated):
        return added[:SOURCE_TEXT_MAX]
    if added in before:
        return before
    return f"{before} {added}".strip()[:SOURCE_TEXT_MAX]


def lexical_document(text: str, source_text: str) -> str:
    """What the sparse vector indexes: the memory's text, then its source turns' words."""
    return f"{text} {source_text}" if source_text else text


def payload_for(state: MemoryState, source_text: str = "") -> MemoryPayload:
    return MemoryPayload(
        text=state.text,
        status=state.status,
        tier=state.tier,
        category=state.category,
        kind=state.kind,
        valid_from=state.valid_from.timestamp() if state.valid_from else None,
        valid_until=state.valid_until.timestamp() if state.valid_until else None,
        said_at=(state.valid_from or state.created_at).timestamp(),
        pinned=state.pinned,
        importance=state.importance,
        q_value=state.q_value,
        source_turn_ids=state.source_turn_ids,
        entities=state.entities,
        extra={"state": to_json(state), **({"source_text": source_text} if source_text else {})},
    )


class QdrantProjection(Projection):
    name = "qdrant"

    def __init__(
        self,
        store: RetrievalStore,
        memory_topic: str,
        embedder: Embedder,
        sparse: BM25Encoder | None = None,
        limits: Limits = DEFAULT_LIMITS,
        partitions: int = 4,
    ) -> None:
        self.store = store
        self.memory_topic = memory_topic
        self.embedder = embedder
        self.sparse = sparse or BM25Encoder()
        self.limits = limits
        self.partitions = partitions
        self.namespaces: set[str] = set()  # seen by this instance (verify's scope)
        store.ensure_collection()

    def positions(self) -> dict[tuple[str, int], int]:
        out = {}
        for partition in range(self.partitions):
            offset = self.store.checkpoint(partition)
            if offset is not None:
                out[(self.memory_topic, partition)] = offset + 1
        return out

    def apply(self, records: Sequence[LogRecord]) -> ApplyStats:
        stats = ApplyStats(records=len(records))
        events: list[tuple[Envelope[Any], LogPosition]] = []
        last: dict[int, int] = {}
        for r in records:
            if r.topic != self.memory_topic:
                continue
            last[r.partition] = max(last.get(r.partition, -1), r.offset)
            try:
                env = decode(r.value, limits=self.limits)
            except EventValidationError:
                stats.rejected += 1  # the DuckDB projection records rejects; nothing to index here
                continue
            if (
                env.type in MEMORY_TYPE_NAMES
                and getattr(env.payload, "memory_id", None) is not None
            ):
                events.append((env, LogPosition(r.partition, r.offset)))
        by_ns: dict[str, set[str]] = defaultdict(set)
        for env, _pos in events:
            by_ns[env.namespace].update(memory_ids_of(env))
        self.namespaces.update(by_ns)
        current: dict[tuple[str, str], MemoryPoint] = {}
        for ns, ids in by_ns.items():
            for found in self.store.get(ns, sorted(ids), with_vectors=True):
                current[(ns, found.memory_id)] = found
        changed: dict[tuple[str, str], MemoryPoint] = {}
        # points whose text changed get their dense vector after the loop, in one call per
        # batch (one hand-off to the native tokenizer instead of one per memory), and a
        # memory created and changed in one batch is embedded once, with its last text
        to_embed: dict[tuple[str, str], tuple[str, str]] = {}
        for env, pos, mid in ((e, p, m) for e, p in events for m in memory_ids_of(e)):
            key = (env.namespace, mid)
            point: MemoryPoint | None = changed.get(key) or current.get(key)
            if point is not None and point.position >= pos:
                stats.duplicates += 1
                continue
            before = from_json(point.payload.extra["state"]) if point is not None else None
            after = apply(before, env)
            if after is None:
                continue
            stats.applied += 1
            source_before = str(point.payload.extra.get("source_text", "")) if point else ""
            source = source_text_after(source_before, env) if point else source_text_after("", env)
            same_text = point is not None and before is not None and before.text == after.text
            # both vectors read the text and the source text: either changing remakes both
            reuse = (
                same_text
                and source == source_before
                and point is not None
                and (bool(point.dense) or key in to_embed)
            )
            if not reuse:
                to_embed[key] = (after.text, source)
            changed[key] = MemoryPoint.build(
                memory_id=after.memory_id,
                namespace=after.namespace,
                dense=point.dense if reuse and point else (),
                sparse=point.sparse
                if reuse and point
                else self.sparse.encode_document(lexical_document(after.text, source)),
                payload=payload_for(after, source),
                position=pos,
            )
        if to_embed:
            vectors = self.dense_vectors(list(to_embed.values()))
            for key, vector in zip(to_embed, vectors, strict=True):
                changed[key] = replace(changed[key], dense=vector)  # made a tuple on init
        if changed:
            self.store.upsert(changed.values())
        for partition, offset in last.items():
            self.store.advance_checkpoint(partition, offset)
        return stats

    def dense_vectors(self, documents: Sequence[tuple[str, str]]) -> Matrix:
        """(text, source text) pairs -> their dense vectors, in two calls per batch at most."""
        texts = [text for text, _ in documents]
        embedded_texts = self.embedder.embed(texts)
        # a memory without source text (a summary, an episode's own words) is its own
        # context: it is not embedded again (a summary's ~1.3k characters were, twice: most
        # of what the dream cycles' summaries cost this projection); the memories cut from
        # one turn share its source text: each is embedded once. Texts and contexts are not
        # embedded in one call: the short texts would be padded to the contexts' length.
        wanted = [cut_at_word(source, CONTEXT_CHARS) or text for text, source in documents]
        at_text = {text: i for i, text in enumerate(texts)}
        others = [c for c in dict.fromkeys(wanted) if c not in at_text]
        embedded_others = self.embedder.embed(others)
        at_other = {context: i for i, context in enumerate(others)}
        # rows of [texts; others]: a context that is a text takes the text's row
        rows = [at_text[c] if c in at_text else len(texts) + at_other[c] for c in wanted]
        contexts = np.vstack([embedded_texts, embedded_others])[rows]
        return blend_with_context(embedded_texts, contexts, CONTEXT_WEIGHT)

    def skip(self, record: LogRecord, reason: str) -> None:
        # the DuckDB projection keeps the reject and the dead-letter topic the bytes
        if record.topic == self.memory_topic:
            self.store.advance_checkpoint(record.partition, record.offset)

    def digest(self, namespaces: Sequence[str]) -> dict[str, str]:
        """``namespace|memory_id`` -> hash of the stored state and position (``memstream verify``)."""
        out = {}
        for ns in sorted(namespaces):
            for p in self.store.all(ns):
                state = orjson.dumps(p.payload.extra["state"], option=orjson.OPT_SORT_KEYS)
                out[f"{ns}|{p.memory_id}"] = hashlib.sha1(state).hexdigest()
        return out

    def close(self) -> None:
        self.store.close()
