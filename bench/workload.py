"""A deterministic, realistic-looking stream of conversation turns for benchmarks."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from memstream.consumers.producer import turn_event
from memstream.schemas.envelope import Envelope

USER = [
    "I moved to {city} last month and I'm still unpacking boxes in the new apartment.",
    "Actually, the deadline for the {project} migration is Friday, not Monday as I said.",
    "I prefer {lang} for data pipelines because the ecosystem around it is much richer.",
    "We decided to use {tool} for the staging environment after a long comparison.",
    "Can you remind me to review the {project} retention policy next Tuesday morning?",
    "My manager {name} wants weekly status reports on the {project} project every Monday.",
    "The {tool} cluster crashed twice yesterday and I was really frustrated about it!",
    "I usually work late in the evenings, mostly on the {project} sync engine in {lang}.",
    "Thanks, that helps a lot.",
    "ok",
    "Our team has six engineers and one intern, and we are hiring two more this year.",
    "I started learning {lang} a few weeks ago for the {project} rewrite at work.",
]
ASSISTANT = [
    "Got it. I'll keep that in mind for the {project} work.",
    "Here is a summary of what we discussed about {tool} and {lang} so far.",
    "Sure, let me know if anything else changes about the plan.",
]
FILL = {
    "city": ["Boston", "Denver", "Toronto", "Berlin", "Lisbon", "Osaka"],
    "project": ["billing", "search", "analytics", "mobile", "ledger"],
    "lang": ["Python", "Rust", "Go", "Kotlin", "TypeScript"],
    "tool": ["Kafka", "Redpanda", "Qdrant", "DuckDB", "PostgreSQL"],
    "name": ["Elena", "Tomas", "Priya", "Kenji"],
}


def turns(
    n: int, *, namespaces: int = 16, sessions: int = 64, seed: int = 7
) -> Iterator[Envelope[Any]]:
    rng = random.Random(seed)
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    for i in range(n):
        role = "user" if rng.random() < 0.7 else "assistant"
        template = rng.choice(USER if role == "user" else ASSISTANT)
        text = template.format(**{k: rng.choice(v) for k, v in FILL.items()})
        session = rng.randrange(sessions)
        yield turn_event(
            namespace=f"bench-ns-{session % namespaces}",
            session_id=f"s{session}",
            turn_id=f"t{i}",
            role=role,
            speaker="Ann" if role == "user" else "assistant",
            text=text,
            occurred_at=t0 + timedelta(seconds=10 * i),
        )


#: topic words for synthetic memory texts (bench context, bench restart)
TOPIC_WORDS = [
    "kafka",
    "duckdb",
    "qdrant",
    "python",
    "rust",
    "billing",
    "search",
    "deploy",
    "review",
    "budget",
    "tea",
    "hiking",
]
