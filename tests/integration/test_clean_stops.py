"""Every stop is clean: SIGTERM under load, with each schedule setting (tiers on a timer with
``dream_every_hours=0``, the daily cycle by default), exits 0 every time."""

from __future__ import annotations

import random
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstream.consumers.producer import Producer
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 9, tzinfo=UTC)


def _load(settings: Settings, stop: threading.Event, ns: str) -> None:
    with Producer(settings) as p:
        i = 0
        while not stop.is_set():
            p.turn(
                namespace=ns,
                session_id=f"s{i // 5}",
                turn_id=f"t{i}",
                role="user",
                speaker="Ada",
                text=f"I moved the meeting number {i} to the blue room.",
                occurred_at=T0 + timedelta(hours=i),
            )
            i += 1
            time.sleep(0.02)


@pytest.mark.parametrize("dream_every_hours", ["0", "24"])
def test_sigterm_under_load_exits_cleanly(
    settings: Settings, tmp_path: Path, dream_every_hours: str
) -> None:
    own = settings.with_(
        topic_prefix=f"stop{random.randrange(10**6)}", data_dir=str(tmp_path / "data")
    )
    worker = WorkerProcess(own, tmp_path / "w", dream_every_hours=dream_every_hours).start()
    stop = threading.Event()
    load = threading.Thread(target=_load, args=(own, stop, "stops"), daemon=True)
    load.start()
    time.sleep(2.5)  # timers have ticked and flushes are under way
    try:
        worker.stop()
    finally:
        stop.set()
        load.join(10)
    assert worker.proc is not None
    assert worker.proc.returncode == 0, worker.log.read_text()[-3000:]
    assert "Traceback" not in worker.log.read_text()


def test_one_data_directory_places_everything(settings: Settings, tmp_path: Path) -> None:
    import subprocess
    import sys

    from memstream.streams.status import wait_until_ready
    from tests.harness import ROOT, settings_env

    own = settings.with_(
        topic_prefix=f"dirs{random.randrange(10**6)}", data_dir=str(tmp_path / "data")
    )
    started = time.time()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memstream.consumers.cli", "worker"],  # no --datadir
        env=settings_env(own),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_until_ready(tmp_path / "data" / "worker", 60, after=started)
        assert (tmp_path / "data" / "worker.json").exists()
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out.decode()[-2000:]
    assert b"memstream worker: ready" in out
