"""``memstream broker`` never ends quietly: when its broker process dies it exits non-zero
and says so; when it is killed its broker dies with it; a record it left behind is cleaned
up (``--stop``, or the next start). ``memstream ingest`` stops with one message when the
broker goes away mid-file, instead of one error per line."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from memstream.infra.broker import process_alive
from memstream.infra.settings import Settings, broker_state_path
from tests.harness import ROOT, settings_env

pytestmark = pytest.mark.integration


def _memstream(data: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTREAM_")}
    env.update(MEMSTREAM_DATA_DIR=str(data), PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-m", "memstream.consumers.cli", *args],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _recorded(data: Path, timeout: float = 30.0) -> dict[str, int | str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        path = broker_state_path(data)
        if path.exists():
            state: dict[str, int | str] = orjson.loads(path.read_bytes())
            return state
        time.sleep(0.1)
    raise AssertionError("memstream broker recorded no broker")


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not process_alive(pid)


def test_memstream_broker_exits_non_zero_when_its_broker_dies(tmp_path: Path) -> None:
    cli = _memstream(tmp_path, "broker")
    try:
        broker_pid = int(_recorded(tmp_path)["pid"])
        os.kill(broker_pid, signal.SIGKILL)  # the broker crashes (or is OOM-killed)
        _out, err = cli.communicate(timeout=20)
        assert cli.returncode == 1
        assert "the broker process exited" in err and "memstream recover" in err, err
        assert not broker_state_path(tmp_path).exists()
    finally:
        cli.kill()


def test_a_killed_memstream_broker_takes_its_broker_along_and_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    cli = _memstream(tmp_path, "broker")
    broker_pid = int(_recorded(tmp_path)["pid"])
    cli.kill()  # SIGKILL: no handler runs
    cli.wait()
    assert _gone(broker_pid), "the broker outlived memstream broker"
    assert broker_state_path(tmp_path).exists()  # the record is stale now

    again = _memstream(tmp_path, "broker")  # a stale record does not stop a new start
    try:
        state = _recorded(tmp_path)
        deadline = time.monotonic() + 20
        while int(state["pid"]) == broker_pid and time.monotonic() < deadline:
            time.sleep(0.1)
            state = _recorded(tmp_path)
        new_pid = int(state["pid"])
        assert new_pid != broker_pid and process_alive(new_pid)
        second = _memstream(tmp_path, "broker")  # one broker per data directory
        _out, err = second.communicate(timeout=30)
        assert second.returncode == 2 and "already runs" in err, err

        stop = _memstream(tmp_path, "broker", "--stop")
        out, err = stop.communicate(timeout=30)
        assert stop.returncode == 0 and "stopped the embedded broker" in out, out + err
        assert _gone(new_pid) and again.wait(10) is not None
        assert not broker_state_path(tmp_path).exists()
    finally:
        again.kill()


async def _turns_arrived(bootstrap: str, topic: str, at_least: int, timeout: float) -> None:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(4)]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ends = await consumer.end_offsets(tps)
            if sum(ends.values()) >= at_least:
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"fewer than {at_least} turns on {topic} after {timeout:.0f}s")
    finally:
        await consumer.stop()


def test_ingest_stops_with_one_message_when_the_broker_goes_away(tmp_path: Path) -> None:
    data = tmp_path / "data"
    broker = _memstream(data, "broker", "--create-topics")
    try:
        state = _recorded(data)
        s = Settings(kafka_bootstrap=str(state["bootstrap"]), data_dir=str(data), partitions=4)
        deadline = time.monotonic() + 30
        while "topics created" not in (broker.stdout.readline() if broker.stdout else ""):
            assert time.monotonic() < deadline
        lines = 60_000
        path = tmp_path / "big.jsonl"
        with path.open("wb") as fh:
            for i in range(lines):
                fh.write(
                    orjson.dumps(
                        {
                            "namespace": f"ns{i % 7}",
                            "session_id": f"s{i // 50}",
                            "turn_id": f"t{i}",
                            "role": "user",
                            "speaker": "Maya",
                            "text": f"Line {i}: I keep notes about the project here.",
                            "occurred_at": "2024-05-01T09:00:00Z",
                        }
                    )
                    + b"\n"
                )
        ingest = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memstream.consumers.cli",
                "ingest",
                str(path),
                "--broker-timeout",
                "3",
            ],
            env=settings_env(s),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        asyncio.run(_turns_arrived(s.bootstrap(), "memstream.turns", 500, 60))
        os.kill(int(state["pid"]), signal.SIGKILL)  # the broker dies mid-file
        started = time.monotonic()
        _out, err = ingest.communicate(timeout=120)
        assert ingest.returncode == 4, err
        assert time.monotonic() - started < 30
        said = [x for x in err.splitlines() if x.strip()]
        assert len(said) == 1, said[:5]
        assert said[0].startswith("memstream ingest: stopped at line ")
        assert "ingest the file again" in said[0]
    finally:
        broker.kill()
        broker.wait()
