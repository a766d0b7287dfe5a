"""A memory's lexical index carries its source turns' words: the write plan puts them in the
evidence, the retrieval projection indexes them next to the memory's text (never shows
them), an update adds the new turn's, and a rebuild from the log gives the same points."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from memstream.core.embedding import HashingEmbedder
from memstream.core.facts import Fact
from memstream.core.gate import GateConfig
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.signals import scan
from memstream.core.sparse import BM25Encoder
from memstream.core.write_plan import (
    SOURCE_TEXT_CHARS,
    BufferedTurn,
    Flush,
    plan_flush,
    source_text,
)
from memstream.projections.port import LogRecord
from memstream.projections.qdrant_projection import QdrantProjection, source_text_after
from memstream.projections.retrieval import CollectionSpec, EdgeRetrievalStore
from memstream.schemas import encode
from memstream.schemas.envelope import Envelope

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
TURN = (
    "As a chemistry teacher I barely have time, so I'm trying to decide where to start "
    "with probability: coin tosses or dice?"
)


def _turn(i: int, text: str) -> BufferedTurn:
    at = T0 + timedelta(minutes=i)
    return BufferedTurn(f"e{i}", f"t{i}", "user", "Ann", text, at, scan(text, role="user"))


def _plan(memory: NamespaceMemory, i: int, text: str, fact: str) -> list[Envelope[Any]]:
    turn = _turn(i, text)
    facts = (Fact(text=fact, category="fact", confidence=0.9, source_turn_ids=(turn.turn_id,)),)
    return plan_flush(memory, Flush("ns", "s1", "high_signal", (turn,), facts, None), GateConfig())


def test_source_text_is_the_turns_words_capped_at_a_word() -> None:
    turns = [_turn(0, "first   turn\ntext"), _turn(1, "second")]
    assert source_text(turns) == "first turn text second"
    long = source_text([_turn(0, "word " * 1000)])
    assert len(long) <= SOURCE_TEXT_CHARS and long.endswith("word")


def _store() -> tuple[EdgeRetrievalStore, QdrantProjection]:
    emb, sparse = HashingEmbedder(), BM25Encoder()
    store = EdgeRetrievalStore(
        tempfile.mkdtemp(prefix="srctext-"), CollectionSpec.for_models(emb, sparse)
    )
    return store, QdrantProjection(store, "t.memory.log", emb, sparse)


def _apply(projection: QdrantProjection, log: list[Envelope[Any]]) -> None:
    projection.apply([LogRecord("t.memory.log", 0, i, e.key, encode(e)) for i, e in enumerate(log)])


def test_a_word_only_in_the_source_turn_finds_the_memory() -> None:
    memory = NamespaceMemory("ns", HashingEmbedder())
    log = _plan(memory, 0, TURN, "Ann is trying to decide where to start with probability")
    created = next(e for e in log if e.type == "MemoryCreated")
    assert "chemistry teacher" in created.payload.evidence["source_text"]
    store, projection = _store()
    _apply(projection, log)
    hits = store.sparse_search("ns", BM25Encoder().encode_query("chemistry teacher"), limit=5)
    assert [h.payload.text for h in hits] == [
        "Ann is trying to decide where to start with probability"
    ]  # found by the turn's words, shown with its own
    store.close()


def test_an_update_adds_its_turn_and_a_rebuild_gives_the_same_points() -> None:
    memory = NamespaceMemory("ns", HashingEmbedder())
    log = _plan(memory, 0, "I live in Boston with my cat Miso.", "Ann lives in Boston")
    log += _plan(
        memory, 1, "Yes, still in Boston, near the harbour.", "Ann lives in Boston near the harbour"
    )
    updated = [e for e in log if e.type == "MemoryUpdated"]
    assert updated, [e.type for e in log]
    store, projection = _store()
    _apply(projection, log)
    (point,) = list(store.all("ns"))
    assert "Miso" in point.payload.extra["source_text"]
    assert "harbour" in point.payload.extra["source_text"]
    rebuilt, again = _store()
    _apply(again, log)
    _apply(again, log)  # a repeat delivery changes nothing
    assert again.digest(["ns"]) == projection.digest(["ns"])
    assert next(iter(rebuilt.all("ns"))).payload.extra == point.payload.extra
    store.close()
    rebuilt.close()


def test_source_text_after_each_event_kind() -> None:
    memory = NamespaceMemory("ns", HashingEmbedder())
    created = next(e for e in _plan(memory, 0, TURN, "Ann likes dice") if e.type == "MemoryCreated")
    assert source_text_after("stale", created) == created.payload.evidence["source_text"]
    assert source_text_after("kept", _plan(memory, 1, TURN, "Ann likes dice")[-1]) == "kept"


def test_the_dense_vector_leans_towards_the_source_turn_and_a_rebuild_remakes_it() -> None:
    memory = NamespaceMemory("ns", HashingEmbedder())
    log = _plan(memory, 0, TURN, "Ann is trying to decide where to start with probability")
    log += _plan(memory, 1, "We adopted a grey kitten named Miso.", "Ann adopted a kitten")
    store, projection = _store()
    _apply(projection, log)
    query = HashingEmbedder().embed(["a chemistry teacher with barely any time"])[0]
    hits = store.dense_search("ns", query, limit=2)
    # only the turn says "chemistry teacher": its memory comes first by the dense vector too
    assert hits[0].payload.text == "Ann is trying to decide where to start with probability"
    rebuilt, again = _store()
    _apply(again, log)
    by_id = {p.memory_id: p.dense for p in store.all("ns", with_vectors=True)}
    for p in rebuilt.all("ns", with_vectors=True):
        assert np.allclose(p.dense, by_id[p.memory_id])
    store.close()
    rebuilt.close()
