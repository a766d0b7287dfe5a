"""Test harness: worker processes and the environment they run with."""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memstream.consumers.client import Memory
from memstream.consumers.ingest_wait import wait_until_recallable
from memstream.consumers.producer import turn_event
from memstream.infra.settings import Settings
from memstream.schemas.envelope import Envelope
from memstream.schemas.events import ConversationTurn
from memstream.streams.status import wait_until_ready

ROOT = Path(__file__).resolve().parent.parent


def settings_env(s: Settings, **overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTREAM_")}
    env.update(
        MEMSTREAM_KAFKA_BOOTSTRAP=s.bootstrap(),
        MEMSTREAM_TOPIC_PREFIX=s.topic_prefix,
        MEMSTREAM_DATA_DIR=s.data_dir,
        MEMSTREAM_PARTITIONS=str(s.partitions),
        MEMSTREAM_MAX_TEXT_CHARS=str(s.max_text_chars),
        MEMSTREAM_BUFFER_IDLE_SECONDS=str(s.buffer_idle_seconds),
        MEMSTREAM_BUFFER_MAX_TURNS=str(s.buffer_max_turns),
        PYTHONPATH=str(ROOT),
    )
    env.update({f"MEMSTREAM_{k.upper()}": v for k, v in overrides.items()})
    return env


class WorkerProcess:
    """A `memstream worker` subprocess with its own data directory and log file."""

    def __init__(
        self,
        s: Settings,
        datadir: Path,
        *,
        entry: str = "memstream.consumers.cli",
        args: Sequence[str] = (),
        **env: str,
    ) -> None:
        self.settings = s
        self.entry = entry  # the module run as `python -m ENTRY worker` (a fake's, in a test)
        self.args = tuple(args)  # more options of `memstream worker`
        self.env = env
        self.datadir = datadir
        self.log = datadir / "worker.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def launch(self) -> None:
        """Start the process without waiting for it (to kill it while it starts, say)."""
        self.datadir.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    self.entry,
                    "worker",
                    "--datadir",
                    str(self.datadir),
                    "--loglevel",
                    "info",
                    *self.args,
                ],
                env=settings_env(self.settings, **self.env),
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )

    def start(self, timeout: float = 60.0) -> WorkerProcess:
        started = time.time()
        self.launch()
        try:
            wait_until_ready(self.datadir, timeout, after=started)
        except TimeoutError:
            self.stop()
            raise AssertionError(
                f"worker did not start; log:\n{self.log.read_text()[-4000:]}"
            ) from None
        return self

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


@contextlib.asynccontextmanager
async def own_worker(settings: Settings, tmp_path: Path, prefix: str) -> AsyncIterator[Settings]:
    """A worker with the defaults on topics of its own (``prefix`` + a random number),
    created first; stopped on the way out. For tests that move a namespace's event time."""
    from memstream.infra.topics import ensure_topics

    own = settings.with_(
        topic_prefix=f"{prefix}{random.randrange(10**6)}", data_dir=str(tmp_path / "w")
    )
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    worker = WorkerProcess(own, tmp_path / "w").start()
    try:
        yield own
    finally:
        worker.stop()


def eventually(
    fn: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 45.0, poll: float = 0.5
) -> Any:
    """``fn()`` again every ``poll`` seconds until ``ok`` holds of its value or ``timeout``
    passed; the last value either way (the caller's assertion says what was wrong)."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(poll)


def projected(s: Settings, timeout: float = 45.0) -> None:
    """Block until every projection of the memory log (DuckDB, Qdrant, archive) has applied
    it to its end. ``get_all`` reads DuckDB and recall reads Qdrant, each at its own position:
    a wait on one does not cover the other (sync tests only: it runs its own event loop)."""
    report = wait_until_recallable(s, {}, timeout=timeout, poll=0.5)
    assert report.done, report


def memories_until(
    mem: Memory,
    namespace: str,
    ok: Callable[[list[dict[str, Any]]], bool],
    timeout: float = 45.0,
) -> list[dict[str, Any]]:
    """The namespace's memories (``get_all``) once ``ok`` holds for them, or as they are
    at the timeout (the caller's assertion then shows them)."""
    deadline = time.monotonic() + timeout
    while True:
        rows = list(mem.get_all(user_id=namespace)["results"])
        if ok(rows) or time.monotonic() > deadline:
            return rows
        time.sleep(0.5)


def remembered(
    s: Settings,
    prefix: str,
    sessions: Sequence[tuple[datetime, Sequence[str]]],
    speaker: str = "Maya",
    timeout: float = 60.0,
) -> str:
    """A new namespace where ``speaker`` said each session's turns (one session each, at its
    time), once every turn has a memory and every projection has applied the log."""
    ns = f"{prefix}-{int(time.time() * 1000) % 10**9}"
    said = sum(len(turns) for _at, turns in sessions)
    with Memory(settings=s) as mem:
        for i, (at, turns) in enumerate(sessions):
            mem.add(
                [{"role": "user", "content": t, "speaker": speaker} for t in turns],
                namespace=ns,
                run_id=f"s{i}",
                occurred_at=at,
            )
        rows = memories_until(mem, ns, lambda found: len(found) >= said, timeout=timeout)
        assert len(rows) >= said, rows
    projected(s)
    return ns


def answers(s: Settings, ns: str, question: str) -> list[dict[str, Any]]:
    """The results of recalling ``question`` in ``ns``, best first."""
    with Memory(settings=s) as mem:
        return list(mem.recall(question, namespace=ns)["results"])


def memstream(s: Settings, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run ``memstream ARGS`` as a user would, against the settings' broker and data."""
    return subprocess.run(
        [sys.executable, "-m", "memstream.consumers.cli", *args],
        env=settings_env(s),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def memstream_json(s: Settings, *args: str, timeout: float = 180) -> Any:
    """``memstream ARGS`` that must succeed and print one JSON document."""
    out = memstream(s, *args, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return orjson.loads(out.stdout)


def turn_from_row(row: Mapping[str, Any], **overrides: Any) -> Envelope[ConversationTurn]:
    """A ConversationTurn event from a row of the ingest format (the bundled conversations)."""
    fields: dict[str, Any] = {
        "namespace": row["namespace"],
        "session_id": row["session_id"],
        "turn_id": row["turn_id"],
        "role": row["role"],
        "speaker": row["speaker"],
        "text": row["text"],
        "occurred_at": datetime.fromisoformat(row["occurred_at"]),
    }
    return turn_event(**{**fields, **overrides})


def tenant_copies(rows: Sequence[Mapping[str, Any]], rounds: int) -> dict[str, list[Any]]:
    """``rounds`` copies of every tenant's rows, as tenants ``<namespace>-r<n>``."""
    out: dict[str, list[Any]] = {}
    for r in range(rounds):
        for row in rows:
            ns = f"{row['namespace']}-r{r}"
            out.setdefault(ns, []).append({**row, "namespace": ns})
    return out


def write_interleaved(path: Path, tenants: Mapping[str, Sequence[Any]]) -> None:
    """One JSONL file of the tenants' rows interleaved line by line, each tenant's in order,
    as many producers would send them."""
    queues = list(tenants.values())
    with path.open("wb") as fh:
        for i in range(max((len(q) for q in queues), default=0)):
            for q in queues:
                if i < len(q):
                    fh.write(orjson.dumps(q[i]) + b"\n")
