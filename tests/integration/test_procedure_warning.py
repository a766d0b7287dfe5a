"""Through the broker with the defaults and the rule extractor: a note about how to do
something that names neither a command nor a next step is kept with a completeness warning
in its creation's evidence (core/metadata.lacking_step); one with its command is not."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 5, 2, 9, tzinfo=UTC)


def test_a_procedure_without_its_command_is_flagged(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"proc-{random.randrange(10**8)}"
    with Memory(settings=settings) as mem:
        mem.add(
            [
                {
                    "role": "user",
                    "content": "To deploy the billing service, ask Tomas.",
                    "speaker": "Ana",
                },
                {
                    "role": "user",
                    "content": "To deploy the API, run `make deploy-api`.",
                    "speaker": "Ana",
                },
            ],
            user_id=ns,
            run_id="s1",
            occurred_at=T0,
        )
        deadline = time.monotonic() + 45
        rows: list[dict[str, object]] = []
        while time.monotonic() < deadline:
            rows = mem.get_all(namespace=ns)["results"]
            texts = " ".join(str(r["memory"]) for r in rows)
            if "billing" in texts and "make deploy-api" in texts:
                break
            time.sleep(0.5)
        warned = {}
        for row in rows:
            created = next(
                e for e in mem.history(str(row["id"]), namespace=ns) if e["type"] == "MemoryCreated"
            )
            warned[str(row["memory"])] = created["payload"]["evidence"].get("incomplete")
        lacking = [w for text, w in warned.items() if "billing" in text]
        complete = [w for text, w in warned.items() if "make deploy-api" in text]
        assert lacking and all(lacking), warned
        assert complete and not any(complete), warned
