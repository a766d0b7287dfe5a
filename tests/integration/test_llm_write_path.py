"""The LLM write path end to end: worker -> real openai client -> fake Responses server.

Each session fails in its own way (rate limit, server errors, malformed output, a
timeout); every turn is still extracted exactly once, and the extraction record says
which extractor produced what and whether it fell back.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from tests.fakes.responses_server import (
    CannedFacts,
    Delay,
    Derive,
    FakeResponsesServer,
    Malformed,
    RateLimited,
    ServerError,
    serve_in_thread,
    worker_env,
)
from tests.harness import WorkerProcess
from tests.integration.test_write_path import covered, memory_log

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
SESSIONS = {
    "s-ok": "fine",
    "s-429": "rate limited once",
    "s-500": "always 500",
    "s-bad": "malformed once",
    "s-slow": "slow once",
    "s-cause": "declares a cause",
    "s-refused": "a fact the log refuses",
}


def _canned(
    text: str, caused_by: int | None, related: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "text": text,
        "category": "fact",
        "confidence": 0.9,
        "importance": 0.6,
        "entities": ["Ann"],
        "valid_from": None,
        "valid_until": None,
        "kind": "note",
        "source_turn_ids": ["s-cause-t0"],
        "subject": "ann",
        "slot": None,
        "caused_by": caused_by,
        "related": related or [],
    }


attempts: Counter[str] = Counter()


def chooser(body: dict[str, Any]) -> Any:
    text = str(body.get("input"))
    session = next((s for s in SESSIONS if f"{s}-" in text), "s-ok")
    attempts[session] += 1
    first = attempts[session] == 1
    if session == "s-429" and first:
        return RateLimited(retry_after=0.1)
    if session == "s-500":
        return ServerError(500)
    if session == "s-bad" and first:
        return Malformed()
    if session == "s-slow" and first:
        return Delay(3.0, Derive())
    if session == "s-cause":
        return CannedFacts(
            (
                _canned("Ann missed the ferry to the island", 1),
                _canned("The bus to the harbour broke down on the way", None),
                _canned(
                    "Ann waited three hours at the pier for the next ferry",
                    None,
                    [{"fact": 0, "relation": "elaborates"}],
                ),
            )
        )
    if session == "s-refused":
        refused = {
            **_canned("Ann lives in city \x07 five", None),
            "source_turn_ids": ["s-refused-t0"],
        }
        kept = {**_canned("Ann likes shade five", None), "source_turn_ids": ["s-refused-t0"]}
        return CannedFacts((refused, kept))
    return Derive()


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeResponsesServer]:
    with serve_in_thread(default=chooser) as server:
        yield server


async def test_every_failure_mode_and_no_turn_lost(
    settings: Settings, fake_llm: FakeResponsesServer, namespace: str, tmp_path: Path
) -> None:
    own = settings.with_(topic_prefix="msllm", data_dir=str(tmp_path / "data"))
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    worker = WorkerProcess(
        own,
        tmp_path / "w",
        **worker_env(
            fake_llm, openai_timeout_s="1", openai_max_retries="2", openai_backoff_s="0.05"
        ),
    ).start()
    try:
        async with AsyncProducer(own) as p:
            for i, session in enumerate(SESSIONS):
                await p.turn(
                    namespace=namespace,
                    session_id=session,
                    turn_id=f"{session}-t0",
                    role="user",
                    speaker="Ann",
                    text=f"I live in city number {i} and my favorite color is shade {i}.",
                    occurred_at=T0 + timedelta(minutes=i),
                )
        deadline = time.monotonic() + 60
        while True:
            log = await memory_log(own, namespace)
            if len(covered(log)) >= len(SESSIONS) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
    finally:
        worker.stop()
    assert sorted(covered(log)) == sorted(f"{s}-t0" for s in SESSIONS)
    heads = {
        e.payload.turns[0].turn_id.rsplit("-t", 1)[0]: e.payload
        for e in log
        if e.type == "TurnsExtracted"
    }
    for session in ("s-ok", "s-429", "s-bad", "s-slow"):
        ex = heads[session].extraction
        assert ex is not None and not ex.fallback, session
        assert ex.tokens_in > 0 and ex.model, session  # token accounting from the response usage
    failed = heads["s-500"].extraction
    assert failed is not None and failed.fallback and failed.fallback_reason
    assert attempts["s-500"] == 3  # the first try and two retries, then the rule extractor
    decided = Counter(e.session_id for e in log if e.type != "TurnsExtracted")
    assert all(decided[s] >= 1 for s in SESSIONS)  # facts from the model, or from the fallback
    created = [e for e in log if e.type == "MemoryCreated"]
    assert all(e.payload.extraction.fallback == (e.session_id == "s-500") for e in created)
    # the model said the bus breaking down caused the missed ferry: a causes edge
    ids = {e.payload.text: e.payload.memory_id for e in created if e.session_id == "s-cause"}
    declared = [
        e.payload for e in log if e.type == "RelationAdded" and e.payload.rule == "llm_caused_by"
    ]
    assert [(p.memory_id, p.target_id, p.relation) for p in declared] == [
        (
            ids["The bus to the harbour broke down on the way"],
            ids["Ann missed the ferry to the island"],
            "causes",
        )
    ], declared
    # a fact the log refuses (a control character) is named in the extraction record, the
    # flush's other fact lands and the worker goes on (it raised before)
    refused = heads["s-refused"].evidence["rejected_facts"]
    assert [r["fact"] for r in refused] == ["Ann lives in city \x07 five"], refused
    assert any(e.payload.text == "Ann likes shade five" for e in created)
    # and that the wait at the pier adds detail to the missed ferry: an elaborates edge
    detail = [
        (e.payload.memory_id, e.payload.target_id, e.payload.relation)
        for e in log
        if e.type == "RelationAdded" and e.payload.rule == "llm_elaborates"
    ]
    assert detail == [
        (
            ids["Ann waited three hours at the pier for the next ferry"],
            ids["Ann missed the ferry to the island"],
            "elaborates",
        )
    ], detail
