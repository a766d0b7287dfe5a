"""A worker with API keys and two namespaces seeded through the broker, for the dashboard's
browser tests and `make screenshots`: turns over four days of event time, recalls with
feedback (Q moves), workflow observations (a degraded workflow with evidence)."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess

T0 = datetime(2024, 5, 1, 9, tzinfo=UTC)
KEYS = "ka=dash-a,root=*"
A_TEXTS = [
    "I moved to Porto in March.",
    "My favourite editor is Helix.",
    "I work on the billing service at Acme.",
    "My daughter Ana starts school in September.",
    "I prefer green tea in the afternoon.",
    "Our deploys go out on Tuesdays after the review.",
]
B_TEXT = "The secret launch codename is Bluefin."


def seed(settings: Settings, tmp: Path) -> tuple[WorkerProcess, str, str]:
    """(the running worker, the dashboard's URL, a memory of dash-a that feedback moved)"""
    own = settings.with_(topic_prefix="msdash", data_dir=str(tmp / "data"))
    asyncio.run(ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions))
    worker = WorkerProcess(own, tmp / "w", api_keys=KEYS, dream_every_hours="0").start()
    try:
        target = _seed(own)
        info = running_worker(own.data_dir)
        assert info is not None
        printed = (tmp / "w" / "worker.log").read_text()
        assert f"dashboard {info['api_url']}/ui/" in printed  # where a user finds it
        return worker, f"{info['api_url']}/ui/", target
    except BaseException:
        worker.stop()
        raise


def _seed(own: Settings) -> str:
    with Memory(settings=own, api_key="root") as mem:
        for day, text in enumerate(A_TEXTS):
            mem.add(text, user_id="dash-a", occurred_at=T0 + timedelta(days=day))
        mem.add(B_TEXT, user_id="dash-b", occurred_at=T0)
        deadline = time.monotonic() + 120
        while (
            len(mem.get_all(user_id="dash-a")["results"]) < len(A_TEXTS)
            or not mem.get_all(user_id="dash-b")["results"]
        ):
            assert time.monotonic() < deadline, "the seeded turns were never projected"
            time.sleep(0.5)
        target = ""
        for outcome in ("positive", "positive", "negative"):
            found = mem.recall("which editor do I like?", namespace="dash-a", k=3)
            target = found["results"][0]["memory_id"]
            mem.feedback(target, outcome, namespace="dash-a")
        for question, outcome in (("where do I live?", "positive"), ("what tea?", "negative")):
            found = mem.recall(question, namespace="dash-a", k=3)
            mem.feedback(found["query_id"], outcome, namespace="dash-a", is_query=True)
        for outcome in ("failure", "failure", "success", "failure"):
            mem.observe("deploy-review", outcome, namespace="dash-a", detail="flaky check")
        mem.observe("nightly-backup", "success", namespace="dash-a")
        while (
            sum(h.get("type") == "QValueUpdated" for h in mem.history(target, namespace="dash-a"))
            < 3
        ):
            assert time.monotonic() < deadline + 60, "the feedback never moved Q"
            time.sleep(0.5)
        return target
