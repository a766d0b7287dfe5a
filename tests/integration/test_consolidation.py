"""The dream cycle through the worker: a dry run writes nothing, an applied cycle writes its
actions as events caused by one report, and applying the same cycle again changes nothing."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, memstream_json
from tests.integration.test_write_path import memory_log

T0 = datetime(2023, 1, 10, 9, tzinfo=UTC)


def consolidate(s: Settings, *args: str) -> dict[str, object]:
    result: dict[str, object] = memstream_json(s, "consolidate", "--json", *args, timeout=120)
    return result


def test_dry_run_apply_and_idempotence(settings: Settings, worker: WorkerProcess) -> None:
    ns = f"dream-{uuid.uuid4().hex[:8]}"
    with Memory(settings=settings) as mem:
        mem.add(
            [
                "I maybe like opera.",
                "I think I might visit Rome someday.",
                "I live in Porto.",
                "My favorite food is bacalhau.",
            ],
            user_id=ns,
            occurred_at=T0,
        )
        deadline = time.monotonic() + 45
        while len(mem.get_all(user_id=ns)["results"]) < 3 and time.monotonic() < deadline:
            time.sleep(0.5)
    before = len(asyncio.run(memory_log(settings, ns)))
    later = "2025-06-01T00:00:00+00:00"  # two years on: decay, expiry and archival rules apply
    dry = consolidate(settings, "--namespace", ns, "--at", later)
    [report] = dry["reports"]  # type: ignore[misc]
    assert report["actions"] and not report["applied"]
    time.sleep(1.0)
    assert len(asyncio.run(memory_log(settings, ns))) == before  # a dry run writes nothing
    applied = consolidate(settings, "--namespace", ns, "--at", later, "--apply")
    assert applied["reports"][0]["applied"]  # type: ignore[index]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        log = asyncio.run(memory_log(settings, ns))
        if any(e.type == "ConsolidationReported" for e in log):
            break
        time.sleep(0.5)
    heads = [e for e in log if e.type == "ConsolidationReported"]
    assert len(heads) == 1
    caused = [e for e in log if e.causation_id == heads[0].event_id]
    assert caused and all(e.producer == "dream-cycle" for e in caused)
    again = consolidate(settings, "--namespace", ns, "--at", later)
    assert again["reports"][0]["actions"] == []  # type: ignore[index]


def test_evolve_reports_evidence_and_applies_deprecations(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"evolve-{uuid.uuid4().hex[:8]}"
    with Memory(settings=settings) as mem:
        mem.add(["I run the staging cluster on port 9093."], user_id=ns, occurred_at=T0)
        deadline = time.monotonic() + 45
        hits: dict[str, object] = {}
        while time.monotonic() < deadline:
            hits = mem.recall("which port does staging use", namespace=ns, k=1)
            if hits["results"]:
                break
            time.sleep(0.5)
        target = hits["results"][0]["memory_id"]  # type: ignore[index]
        for _ in range(10):  # used often, and wrong every time
            found = mem.recall("which port does staging use", namespace=ns, k=1)
            mem.feedback(found["query_id"], "very_negative", namespace=ns, is_query=True)
        deadline = time.monotonic() + 90  # a loaded machine: the fault tests run beside
        while (q := mem.get(target, namespace=ns)["q_value"]) >= 0.2:
            assert time.monotonic() < deadline, f"Q still {q} after ten very negative ratings"
            time.sleep(0.5)
    # the ten uses are counted as their access events arrive: asked again until they are
    while True:
        report = memstream_json(settings, "evolve", "--json", "--namespace", ns)["reports"][0]
        first = report["candidates"][0] if report["candidates"] else {}
        if (first.get("level"), first.get("action")) == ("critical", "deprecate"):
            break
        assert time.monotonic() < deadline, report["candidates"]
        time.sleep(1.0)
    assert report["candidates"][0]["evidence"]  # usage history behind the suggestion
    memstream_json(settings, "evolve", "--apply", "--json", "--namespace", ns)
    with Memory(settings=settings) as mem:
        deadline = time.monotonic() + 20
        while mem.get(target, namespace=ns)["status"] != "archived" and time.monotonic() < deadline:
            time.sleep(0.5)
        assert mem.get(target, namespace=ns)["status"] == "archived"  # left retrieval
