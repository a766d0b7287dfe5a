"""MEMSTREAM_EMBEDDER reaches retrieval through the broker: a worker configured with another
embedder than the default (WordLlama) writes its memories into a collection named for that
model (a fresh one, filled from the log) and recall answers from it; a combination of two
(``core.combined_embedder``) the same way, in one collection named for both."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from memstream.projections.layout import Layout
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 9, tzinfo=UTC)


@pytest.mark.parametrize(
    ("embedder", "named"),
    [("hashing", "hashing"), ("wordllama:0.7+hashing:0.3", "supercatx0-7-hashingx0-3")],
)
def test_a_worker_with_another_embedder_writes_and_recalls_in_its_own_collection(
    settings: Settings, tmp_path: Path, embedder: str, named: str
) -> None:
    own = settings.with_(
        topic_prefix=f"emb{random.randrange(10**6)}",
        data_dir=str(tmp_path / "data"),
        embedder=embedder,
    )
    worker = WorkerProcess(own, tmp_path / "w", embedder=embedder).start()
    ns = "emb-tenant"
    try:
        with Memory(settings=own) as mem:
            mem.add(
                [
                    {"role": "user", "content": text, "speaker": "Ana"}
                    for text in [
                        "I live in Porto.",
                        "My daughter loves the climbing wall at the gym.",
                        "I work as a nurse at the city hospital.",
                    ]
                ],
                user_id=ns,
                run_id="s1",
                occurred_at=T0,
            )
            deadline = time.monotonic() + 45
            while len(mem.get_all(user_id=ns)["results"]) < 3 and time.monotonic() < deadline:
                time.sleep(0.5)
            # the retrieval projection may trail the analytics one: ask until it has them
            while time.monotonic() < deadline:
                hits = mem.search("where does Ana work?", user_id=ns, top_k=3)["results"]
                if hits:
                    break
                time.sleep(0.5)
            assert hits and "nurse" in hits[0]["memory"], hits
    finally:
        worker.stop()
    collections = [p.name for p in Layout(own.data_path).qdrant().rglob("*") if p.is_dir()]
    assert any(named in name for name in collections), collections
    # only the configured recipe's collection: not the default one besides it
    assert not any("supercat-v" in name for name in collections), collections
