"""An explicit evaluation time for recall (``at``), through the SDK, HTTP and the bus, with
the defaults: a replay of history recalls "as if then" — the access event it records carries
that time (so no dream cycle runs at today's date in the middle of a replay), and recency
is measured from it; ``as_of`` still cuts knowledge and ``at`` cuts nothing. A time past
the event-time bound is an error naming ``at``."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from memstream.consumers.bus_recall import recall_over_bus
from memstream.consumers.client import Memory, MemstreamError
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, memstream

pytestmark = pytest.mark.integration

T0 = datetime(2023, 3, 1, 9, tzinfo=UTC)


def _access_time(settings: Settings, query_id: str) -> str | None:
    out = memstream(
        settings,
        "sql",
        f"SELECT occurred_at FROM access WHERE query_id = '{query_id}'",
        "--format",
        "json",
    )
    lines = out.stdout.splitlines()
    return str(orjson.loads(lines[0])["occurred_at"]) if out.returncode == 0 and lines else None


def test_recall_at_a_past_time_records_and_scores_then(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"at-{uuid.uuid4().hex[:8]}"
    at = T0 + timedelta(days=3)
    with Memory(settings=settings) as mem:
        mem.add(
            [{"role": "user", "content": "I booked a ferry to Hydra for the spring holiday."}],
            user_id=ns,
            occurred_at=T0,
        )
        deadline = time.monotonic() + 60
        while not mem.recall("ferry Hydra", namespace=ns)["results"]:
            assert time.monotonic() < deadline
            time.sleep(0.5)
        answer = mem.recall("ferry Hydra", namespace=ns, filters={"at": at})
        assert answer["results"] and "Hydra" in answer["results"][0]["text"]
        # the memory is three days old then, not years: its recency says so
        explain = answer["results"][0]["explain"]
        later = mem.recall("ferry Hydra", namespace=ns, filters={"at": at + timedelta(days=900)})
        assert later["results"][0]["score"] <= answer["results"][0]["score"], (explain, later)
        deadline = time.monotonic() + 30
        while (seen := _access_time(settings, answer["query_id"])) is None:
            assert time.monotonic() < deadline
            time.sleep(0.5)
        assert seen.startswith("2023-03-04"), seen

        with pytest.raises(MemstreamError) as refused:
            mem.recall("ferry Hydra", namespace=ns, filters={"at": "9999-01-01T00:00:00Z"})
        assert refused.value.status == 422 and refused.value.path == "at"

    # the bus: a RecallRequested with at answers likewise
    reply = asyncio.run(recall_over_bus(settings, ns, "ferry Hydra", at=at))
    assert reply.payload.error is None and reply.payload.results
