"""Through the broker with the defaults and the rule extractor: the assistant's reply is kept
as a memory linked to the request it answers; a question about what was said pairs the
request with its reply, any other question ranks the reply below what the user said."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from memstream.consumers.client import Memory, MemstreamError
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 5, 1, 9, tzinfo=UTC)
REQUEST = (
    "My knee has been hurting after the long weekend runs and I am not sure whether I "
    "should stop running for a while or keep going slowly"
)
REPLY = """For a sore knee after long runs, I recommend easing off rather than stopping.

## Rest and ice
Take **two rest days** and ice the knee for fifteen minutes after each run.

## Strength
Add **glute bridges** twice a week."""


def _both(mem: Memory, ns: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 45
    hits: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        hits = mem.recall("What did you recommend for my knee?", namespace=ns, k=5)["results"]
        if len(hits) >= 2:
            return hits
        time.sleep(0.5)
    raise AssertionError(f"request and reply were not both recalled: {hits}")


def _linked(mem: Memory, ns: str, reply: str) -> set[str]:
    """The memories the reply is linked to (the graph projection may lag the recall one)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            kind = mem.get(reply, namespace=ns)["kind"]
            edges = mem.graph(reply, namespace=ns, relation="related_to")["edges"]
        except MemstreamError:
            kind, edges = None, []
        if edges or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert kind == "episode" and edges, edges
    assert all(e["rule"] == "reply" and e["source_id"] == reply for e in edges), edges
    return {str(e["target_id"]) for e in edges}


def test_a_reply_is_kept_linked_to_its_request_and_recalled_with_it(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"reply-{random.randrange(10**8)}"
    with Memory(settings=settings) as mem:
        mem.add(
            [
                {"role": "user", "content": REQUEST, "speaker": "Dana"},
                {"role": "assistant", "content": REPLY},
            ],
            user_id=ns,
            run_id="s1",
            occurred_at=T0,
        )
        hits = _both(mem, ns)
        texts = [str(h["text"]) for h in hits]
        at = next(i for i, t in enumerate(texts) if t.startswith("The assistant replied: "))
        reply = hits[at]
        assert "two rest days" in reply["text"] and "glute bridges" in reply["text"]
        requests = _linked(mem, ns, str(reply["memory_id"]))
        # asked about what was said: the reply is next to the request it answers
        neighbours = {str(h["memory_id"]) for h in hits[max(at - 1, 0) : at + 2]}
        assert requests & neighbours, (texts, requests)
        # any other question: the reply ranks below what the user said
        other = mem.recall("should I stop running with a sore knee", namespace=ns, k=5)
        ranked = [str(h["text"]) for h in other["results"]]
        replies = [i for i, t in enumerate(ranked) if t.startswith("The assistant replied: ")]
        users = [i for i, t in enumerate(ranked) if not t.startswith("The assistant replied: ")]
        assert users and (not replies or min(users) < min(replies)), ranked
        assert all(
            h["explain"].get("reply") == 0.5
            for h in other["results"]
            if str(h["text"]).startswith("The assistant replied: ")
        )
