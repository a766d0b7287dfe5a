"""A broker restart that loses the log (the embedded broker keeps memory only): it is
detected, said loudly, and undone by the documented command.

The embedded broker is stopped and started on the same address, so every topic comes back
empty. While it is down /health says the broker is unreachable; once it is back (topics
created again, as an operator would) the worker's read positions are past the new log's
end and the log has another identity: /health and ``memstream status`` say so and name
``memstream recover``. A restarted worker refuses to run on that log instead of applying
nothing quietly. ``memstream recover`` restores the log from the Parquet archive and
rebuilds the read models; then the worker starts, old memories are recalled, new turns
become recallable, health is ok and ``memstream verify`` finds the live projections equal
to a rebuild from the restored log.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from memstream.infra.broker import EmbeddedBroker
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess, memstream, memstream_json

pytestmark = pytest.mark.integration

BEFORE = [
    "I moved to Lisbon last spring and I love the light here.",
    "My favourite editor is Helix, I switched from Vim.",
    "Our team deploys to Kubernetes every Thursday.",
]
AFTER = ["Our staging database runs PostgreSQL 16 since the migration."]


def _jsonl(path: Path, texts: list[str], first: int) -> Path:
    rows = [
        {
            "namespace": "acme",
            "session_id": f"s{first + i}",
            "turn_id": f"t{first + i}",
            "role": "user",
            "speaker": "Maya",
            "text": text,
            "occurred_at": f"2024-05-0{1 + (first + i) // 10}T09:{(first + i) % 10:02d}:00Z",
        }
        for i, text in enumerate(texts)
    ]
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    return path


def _health(s: Settings) -> dict[str, Any]:
    url = running_worker(s.data_dir)["api_url"]  # type: ignore[index]
    return dict(httpx.get(f"{url}/health", timeout=5).json())


def _wait_health(s: Settings, needle: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        body = _health(s)
        if any(needle in p for p in body["problems"]):
            return body
        time.sleep(0.3)
    raise AssertionError(f"/health never said {needle!r} within {timeout:.0f}s: {body}")


def _archived(s: Settings) -> int:
    path = Path(s.data_dir) / "archive" / "_positions.json"
    if not path.exists():
        return 0
    return sum(sum(parts.values()) for parts in orjson.loads(path.read_bytes()).values())


def _recalled(s: Settings, query: str) -> str:
    result = memstream_json(s, "recall", query, "--namespace", "acme", "--json")
    return " ".join(r["text"] for r in result["results"])


def test_a_broker_that_comes_back_empty_is_detected_and_recovered(tmp_path: Path) -> None:
    broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    s = Settings(
        kafka_bootstrap=broker.bootstrap,
        topic_prefix="msrestart",
        data_dir=str(tmp_path / "data"),
        partitions=2,
        buffer_idle_seconds=1.0,
    )
    env = {"health_probe_seconds": "0.5"}
    worker = WorkerProcess(s, tmp_path / "w", **env)
    try:
        asyncio.run(ensure_topics(s.bootstrap(), s.topic_prefix, s.partitions))
        worker.start()
        out = memstream(s, "ingest", str(_jsonl(tmp_path / "a.jsonl", BEFORE, 0)), "--wait")
        assert out.returncode == 0, out.stderr
        assert "Lisbon" in _recalled(s, "where did Maya move?")
        applied = sum(_health(s)["positions"]["archive"].values())
        deadline = time.monotonic() + 20
        while _archived(s) < applied and time.monotonic() < deadline:
            time.sleep(0.3)  # the archive writes out what it holds once the log is quiet
        assert _archived(s) >= applied > 0

        broker.stop()
        assert _wait_health(s, "broker: unreachable", 10)["status"] == "degraded"
        broker.start()  # same address, memory storage: every topic is gone
        asyncio.run(ensure_topics(s.bootstrap(), s.topic_prefix, s.partitions))
        body = _wait_health(s, "not the log this data directory was built from", 15)
        body = _wait_health(s, "past the end of the log", 15)
        assert body["status"] == "degraded"
        assert any("memstream recover" in p for p in body["problems"]), body["problems"]
        out = memstream(s, "status")
        assert out.returncode == 1 and "memstream recover" in out.stdout, out.stdout

        worker.stop()
        refused = WorkerProcess(s, tmp_path / "w", **env)
        refused.launch()
        assert refused.proc is not None
        assert refused.proc.wait(60) == 3
        assert "refusing to start" in refused.log.read_text()

        out = memstream(s, "recover", timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "records restored from the archive" in out.stdout
        assert "offsets: as before" in out.stdout, out.stdout

        worker.start()
        assert "Lisbon" in _recalled(s, "where did Maya move?")
        out = memstream(s, "ingest", str(_jsonl(tmp_path / "b.jsonl", AFTER, 10)), "--wait")
        assert out.returncode == 0, out.stderr
        assert "PostgreSQL" in _recalled(s, "which database runs on staging?")
        deadline = time.monotonic() + 20
        while (body := _health(s))["status"] != "ok" and time.monotonic() < deadline:
            time.sleep(0.5)
        assert body["status"] == "ok", body["problems"]
        out = memstream(s, "verify", timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
    finally:
        worker.stop()
        broker.stop()
