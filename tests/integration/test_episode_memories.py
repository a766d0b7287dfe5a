"""Through the broker with the defaults: a long user message that carries no claim the rule
extractor can name is kept as an episode, and a later question about it finds it first; so
is one whose facts hold little of it (one stray fact from its last clause)."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, eventually

pytestmark = pytest.mark.integration

T0 = datetime(2024, 5, 1, 9, tzinfo=UTC)
MESSAGE = (
    "Can you walk me through how the lockout should work after five failed logins, with "
    "Redis keeping the counter and a fifteen minute expiry?"
)


def _said_then_recalled(
    mem: Memory, ns: str, said: str, question: str, found: Callable[[list[str]], bool]
) -> list[dict[str, object]]:
    """Craig says ``said``; the top 3 for ``question`` once ``found`` holds of their texts
    (or what they are after 45 s)."""
    mem.add(
        [{"role": "user", "content": said, "speaker": "Craig"}],
        user_id=ns,
        run_id="s1",
        occurred_at=T0,
    )
    hits: list[dict[str, object]] = eventually(
        lambda: mem.recall(question, namespace=ns, k=3)["results"],
        lambda hits: found([str(h["text"]) for h in hits]),
    )
    return hits


def test_a_message_without_a_fact_is_kept_as_an_episode(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"ep-{random.randrange(10**8)}"
    with Memory(settings=settings) as mem:
        hits = _said_then_recalled(
            mem, ns, MESSAGE, "which tables are in the schema and what fails?", bool
        )
        assert hits, "the episode was recalled"
        top = hits[0]
        assert str(top["text"]).startswith("Craig said: Can you walk me through how the lockout")
        assert top["category"] == "moment" and top["source_turn_ids"]
        # GET reads the analytics projection, which may trail the store recall searched by a
        # batch: the route waits for a memory this worker knows instead of answering 404
        stored = mem.get(str(top["memory_id"]), namespace=ns)
        assert stored["kind"] == "episode"


SHIPPING = (
    "I'm trying to ship my bakery ordering site on Render.com with Docker, aiming for a first "
    "release by March 1, 2024, can you help me with that, I've got this Dockerfile so far:\n"
    "```dockerfile\nFROM node:18\nRUN npm ci\n```\nBut the build keeps failing, can you help "
    "me fix it, I'm using JWT validation as well, so I want to make sure that works too"
)


def test_a_message_its_facts_hold_little_of_is_kept_as_an_episode_too(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"ep-thin-{random.randrange(10**8)}"
    with Memory(settings=settings) as mem:
        hits = _said_then_recalled(
            mem,
            ns,
            SHIPPING,
            "when did I plan the first release of the bakery site?",
            lambda texts: any(t.startswith("Craig said: I'm trying to ship") for t in texts),
        )
        texts = [str(h["text"]) for h in hits]
        # the rule extractor's one fact is there, and so is the message as said, first
        assert texts and texts[0].startswith("Craig said: I'm trying to ship my bakery")
        assert "March 1, 2024" in texts[0]
        assert any("make sure that works too" in t for t in texts)
