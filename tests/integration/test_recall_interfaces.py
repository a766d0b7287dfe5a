"""Recall and learning through every interface against the session worker: HTTP (SDK),
CLI, Kafka request/reply; feedback moves Q; edits are events; tenants never mix."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from memstream.consumers.bus_recall import recall_over_bus
from memstream.consumers.client import Memory, MemstreamError
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from tests.harness import ROOT, WorkerProcess, settings_env

T0 = datetime(2024, 4, 1, 9, tzinfo=UTC)
FACTS = {
    "alpha": [
        "I live in Lisbon.",
        "My favorite food is ramen.",
        "I work at Initech as a data engineer.",
        "We decided to adopt Kafka for the event pipeline.",
    ],
    "beta": [
        "I live in Oslo.",
        "My favorite food is tacos.",
        "I work at Globex as a designer.",
        "We decided to move the team to Rust.",
    ],
}


def eventually(fn: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 45.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


@pytest.fixture(scope="module")
def tenants(settings: Settings, worker: WorkerProcess) -> dict[str, str]:
    suffix = f"{random.randrange(10**8)}"
    names = {key: f"{key}-{suffix}" for key in FACTS}
    with Memory(settings=settings) as mem:
        for key, ns in names.items():
            mem.add(
                [{"role": "user", "content": text, "speaker": "Sam"} for text in FACTS[key]],
                user_id=ns,
                run_id="s1",
                occurred_at=T0,
            )
        for ns in names.values():
            got = eventually(
                lambda ns=ns: mem.get_all(user_id=ns)["results"], lambda rs: len(rs) >= 4
            )
            assert len(got) >= 4, got
            # the retrieval projection may trail the analytics one: wait for it as well
            found = eventually(
                lambda ns=ns: mem.recall("Kafka Rust Lisbon Oslo", namespace=ns, k=10)["results"],
                lambda rs: len(rs) >= 4,
            )
            assert len(found) >= 4, found
    return names


def test_sdk_search_is_explained_and_scoped(settings: Settings, tenants: dict[str, str]) -> None:
    with Memory(settings=settings) as mem:
        found = mem.search("where does Sam live?", user_id=tenants["alpha"], top_k=3)
        assert found["results"][0]["memory"].endswith("Lisbon")
        first = found["results"][0]
        assert first["metadata"]["source_turn_ids"] and "relevance" in first["explain"]
        assert all("Oslo" not in r["memory"] for r in found["results"])


def test_tenant_isolation_over_many_random_recalls(
    settings: Settings, tenants: dict[str, str]
) -> None:
    rng = random.Random(7)
    words = [
        "live",
        "food",
        "work",
        "decided",
        "Kafka",
        "Rust",
        "Lisbon",
        "Oslo",
        "tacos",
        "ramen",
        "team",
        "engineer",
        "designer",
    ]
    with Memory(settings=settings) as mem:
        own = {ns: {r["id"] for r in mem.get_all(user_id=ns)["results"]} for ns in tenants.values()}
        for _ in range(300):
            ns = rng.choice(list(tenants.values()))
            query = " ".join(rng.sample(words, 3))
            ids = {r["id"] for r in mem.search(query, user_id=ns, top_k=10)["results"]}
            assert ids <= own[ns]


def test_cli_recall_and_batch(settings: Settings, tenants: dict[str, str], tmp_path: Path) -> None:
    env = settings_env(settings)
    single = subprocess.run(
        [
            sys.executable,
            "-m",
            "memstream.consumers.cli",
            "recall",
            "what food does Sam like?",
            "--namespace",
            tenants["beta"],
            "--json",
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert single.returncode == 0, single.stderr
    assert "tacos" in orjson.loads(single.stdout)["results"][0]["text"]
    batch = tmp_path / "q.jsonl"
    batch.write_text(
        "\n".join(
            orjson.dumps(q).decode()
            for q in [
                {"id": "a1", "namespace": tenants["alpha"], "query": "employer", "k": 2},
                {"id": "b1", "namespace": tenants["beta"], "query": "what did the team decide"},
            ]
        )
        + "\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "memstream.consumers.cli", "recall", "--batch", str(batch)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = [orjson.loads(line) for line in out.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["a1", "b1"]
    assert len(lines[0]["results"]) <= 2 and all(
        "source_turn_ids" in r for r in lines[0]["results"]
    )


def test_kafka_request_reply(settings: Settings, tenants: dict[str, str]) -> None:
    answer = asyncio.run(recall_over_bus(settings, tenants["alpha"], "where does Sam work?", k=3))
    assert answer.payload.results and "Initech" in answer.payload.results[0].text
    assert answer.causation_id is not None
    # nothing relevant: withheld on the bus too, unless the request asks for it
    off = "What is the capital gains tax rate on cryptocurrency?"
    held = asyncio.run(recall_over_bus(settings, tenants["alpha"], off, k=3)).payload
    assert held.confidence == "skipped" and held.results == [], held
    given = asyncio.run(
        recall_over_bus(settings, tenants["alpha"], off, k=3, include_low_confidence=True)
    ).payload
    assert given.confidence == "skipped" and given.results, given


def test_feedback_moves_q_and_edits_are_events(settings: Settings, tenants: dict[str, str]) -> None:
    ns = tenants["alpha"]
    with Memory(settings=settings) as mem:
        hits = mem.recall("what food does Sam like?", namespace=ns, k=3)
        top = hits["results"][0]["memory_id"]
        before = mem.get(top, namespace=ns)["q_value"]
        mem.feedback(hits["query_id"], "positive", namespace=ns, is_query=True)
        after = eventually(lambda: mem.get(top, namespace=ns)["q_value"], lambda q: q > before)
        assert after > before  # the top hit earned reward 1 with full credit
        mem.update(top, "Sam's favorite food is spicy ramen.", namespace=ns)
        eventually(lambda: mem.get(top, namespace=ns)["text"], lambda t: "spicy" in t)
        mem.delete(top, namespace=ns)

        def status() -> str:
            try:
                return str(mem.get(top, namespace=ns)["status"])
            except MemstreamError as e:
                return e.code

        # like mem0: a deleted memory is not found; its history stays
        assert eventually(status, lambda s: s == "deleted") == "deleted"
        kinds = [e["type"] for e in mem.history(top, namespace=ns)]
        assert kinds[0] == "MemoryCreated" and {
            "QValueUpdated",
            "MemoryUpdated",
            "MemoryArchived",
        } <= set(kinds)
        # the retrieval projection applies the archival on its own schedule
        found = eventually(
            lambda: [r["memory_id"] for r in mem.recall("favorite food", namespace=ns)["results"]],
            lambda ids: top not in ids,
        )
        assert top not in found


def test_invalid_requests_get_clear_errors(settings: Settings, tenants: dict[str, str]) -> None:
    with Memory(settings=settings) as mem:
        with pytest.raises(MemstreamError) as info:
            mem.add([{"role": "robot", "content": "x"}], user_id=tenants["alpha"])
        assert info.value.status == 400 and info.value.path == "payload.role"
        with pytest.raises(MemstreamError) as info:
            mem.feedback("m1", namespace=tenants["alpha"])  # neither outcome nor reward
        assert info.value.code == "missing_outcome"


def test_api_keys_scope_namespaces(settings: Settings, tmp_path: Path) -> None:
    own = settings.with_(topic_prefix="msauth", data_dir=str(tmp_path / "data"))
    asyncio.run(ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions))
    worker = WorkerProcess(own, tmp_path / "w", api_keys="ka=acme,kb=globex,root=*").start()
    try:
        with Memory(settings=own, api_key="ka") as a:
            a.add("I prefer tea.", user_id="acme", occurred_at=T0)
            with pytest.raises(MemstreamError) as info:
                a.add("I prefer coffee.", user_id="globex", occurred_at=T0)
            assert info.value.status == 403
            with pytest.raises(MemstreamError) as info:
                a.get_all(user_id="globex")
            assert info.value.status == 403
        with Memory(settings=own) as anonymous, pytest.raises(MemstreamError) as info:
            anonymous.get_all(user_id="acme")
        assert info.value.status == 401
        with Memory(settings=own, api_key="kb") as b, pytest.raises(MemstreamError):
            b.search("tea", user_id="acme")

        # Kafka: the responder wants a key for the namespace in the memstream-token header
        with Memory(settings=own, api_key="ka") as a:
            assert eventually(lambda: a.get_all(user_id="acme")["results"], bool)

        def bus(token: str | None) -> Any:
            return asyncio.run(
                recall_over_bus(own, "acme", "what do I prefer to drink?", k=3, token=token)
            ).payload

        for token, refusal in (
            (None, "unauthorized"),
            ("nope", "unauthorized"),
            ("kb", "forbidden"),
        ):
            answer = bus(token)
            assert answer.error and answer.error.startswith(refusal), answer
            assert answer.results == [] and answer.confidence == "skipped"
        for token in ("ka", "root"):
            answer = bus(token)
            assert answer.error is None
            assert answer.results and "tea" in answer.results[0].text
    finally:
        worker.stop()
