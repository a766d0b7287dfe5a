"""The entity hub through the broker, defaults and the rule extractor: memories about one
person said in different sessions, under a full name and a short one, come back as one
entity with its timeline (SDK, CLI); another namespace's key sees none of it."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, memories_until, memstream, projected

pytestmark = pytest.mark.integration

T0 = datetime(2024, 2, 1, 9, tzinfo=UTC)


def test_one_entity_under_two_names_with_its_timeline(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"hub-{random.randrange(10**8)}"
    sessions = [
        "My friend Melanie moved to Lisbon last year.",
        "Melanie started a pottery class on Tuesdays.",
        "I had lunch with Mel at the harbour.",
        "My dentist Dr. Okafor retired.",
    ]
    with Memory(settings=settings) as mem:
        for day, text in enumerate(sessions):
            mem.add(
                [{"role": "user", "content": text, "speaker": "Ana"}],
                user_id=ns,
                run_id=f"s{day}",
                occurred_at=T0 + timedelta(days=30 * day),
            )
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            hub = mem.entity("Mel", namespace=ns)
            if len(hub["timeline"]) >= 3:
                break
            time.sleep(0.5)
        assert hub["name"] == "Melanie" and "Mel" in hub["aliases"], hub
        texts = [m["text"] for m in hub["timeline"]]
        assert len(texts) == 3 and "Lisbon" in texts[0] and "harbour" in texts[-1], texts
        assert all("Okafor" not in t for t in texts)
        listed = {e["name"]: e for e in mem.entities(namespace=ns)["entities"]}
        # counted from the memories' entity lists (the timeline also finds mentions in text)
        assert listed["Melanie"]["memories"] >= 2 and "Mel" in listed["Melanie"]["aliases"]
        # a question of two people at once is asked of each (core.decompose), so each
        # person's memories compete on their own
        # (the count alone can be reached before the Okafor turn is extracted: one turn can
        # give two memories)
        while len(rows := mem.get_all(user_id=ns)["results"]) < len(sessions) or not any(
            "Okafor" in str(r["memory"]) for r in rows
        ):
            assert time.monotonic() < deadline + 45, rows
            time.sleep(0.5)
        projected(settings)  # get_all read DuckDB; recall reads Qdrant
        both = mem.recall("What news did Melanie and Okafor each have?", namespace=ns, k=4)
        assert both["subqueries"] == ["What news did Melanie have?", "What news did Okafor have?"]
        found = " ".join(r["text"] for r in both["results"])
        assert "Okafor" in found and ("Lisbon" in found or "pottery" in found), found
    out = memstream(settings, "entity", "Melanie", "--namespace", ns)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Melanie (also Mel): 3 memories"), out.stdout


def test_a_name_a_pronoun_resolves_to_counts_as_its_entity(
    settings: Settings, worker: WorkerProcess
) -> None:
    # "She's ..." becomes "Noor is ...": the name opening the resolved claim is one of the
    # memory's entities (a capital opening a claim is otherwise taken for a sentence start)
    ns = f"hub-{random.randrange(10**8)}"
    said = (
        "Noor and I just celebrated two years together.",
        "She's on spring break from teaching music at the high school.",
    )
    with Memory(settings=settings) as mem:
        turns = [{"role": "user", "content": text, "speaker": "Amara"} for text in said]
        mem.add(turns, user_id=ns, run_id="s0", occurred_at=T0)
        rows = memories_until(mem, ns, lambda rs: any("spring" in str(r["memory"]) for r in rs))
        assert any("Noor is on spring break" in str(r["memory"]) for r in rows), rows
        projected(settings)
        listed = {e["name"]: e for e in mem.entities(namespace=ns)["entities"]}
        # the resolved claim names Noor (before, no memory listed Noor: the one name of the
        # first turn opens its sentence)
        assert listed["Noor"]["memories"] >= 1, listed
