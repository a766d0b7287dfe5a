"""The CLI against a worker with API keys (issue 12, item 8), through the real broker: it sends
its own key (--api-key or MEMSTREAM_API_KEY) on every command that calls the worker, and
without a key the worker accepts, every such command fails with one line and no traceback."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from tests.harness import ROOT, WorkerProcess, settings_env

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 9, tzinfo=UTC)
KEYS = "ka=acme,root=*"


def cli(s: Settings, *args: str, key: str | None = None) -> subprocess.CompletedProcess[str]:
    env = settings_env(s)
    if key is not None:
        env["MEMSTREAM_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "memstream.consumers.cli", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_line_failure(out: subprocess.CompletedProcess[str], command: str, says: str) -> None:
    assert out.returncode != 0, (command, out.stdout)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, (command, out.stderr)
    assert lines[0].startswith(f"memstream {command}: ") and says in lines[0], (command, lines)


def test_the_cli_sends_its_own_key_and_says_when_it_lacks_one(
    settings: Settings, tmp_path: Path
) -> None:
    own = settings.with_(topic_prefix="mscli", data_dir=str(tmp_path / "data"))
    asyncio.run(ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions))
    worker = WorkerProcess(own, tmp_path / "w", api_keys=KEYS, dream_every_hours="0").start()
    try:
        with Memory(settings=own, api_key="ka") as mem:
            mem.add("I prefer green tea.", user_id="acme", occurred_at=T0)
            deadline = time.monotonic() + 45
            while not (found := mem.get_all(user_id="acme")["results"]):
                assert time.monotonic() < deadline, "no memory"
                time.sleep(0.3)
        memory_id = found[0]["memory_id"]
        needs = "--api-key KEY or set MEMSTREAM_API_KEY"
        for command, args in {
            "sql": ["SELECT 1"],
            "gaps": [],
            "health": [],
            "evidence": ["deploy"],
            "verify": [],
            "audit": [memory_id],
            "recall": ["which tea do I prefer?", "--namespace", "acme"],
            "consolidate": [],
        }.items():
            one_line_failure(cli(own, command, *args), command, needs)
        # a key the worker does not know, and one too narrow for an admin route
        one_line_failure(cli(own, "sql", "SELECT 1", key="nope"), "sql", "did not accept")
        one_line_failure(cli(own, "sql", "SELECT 1", key="ka"), "sql", "may not do this")
        # the right keys: from the environment, or the flag (which wins), before or after
        ok = cli(own, "recall", "which tea do I prefer?", "--namespace", "acme", key="ka")
        assert ok.returncode == 0 and "green tea" in ok.stdout, ok.stderr
        for args in (
            ["sql", "SELECT count(*) AS n FROM memories", "--api-key", "root"],
            ["--api-key", "root", "sql", "SELECT count(*) AS n FROM memories"],
        ):
            out = cli(own, *args, key="ka")
            assert out.returncode == 0 and "1" in out.stdout, out.stderr
        audit = cli(own, "audit", memory_id, "--api-key", "root")
        assert audit.returncode == 0 and memory_id in audit.stdout, audit.stderr
    finally:
        worker.stop()
