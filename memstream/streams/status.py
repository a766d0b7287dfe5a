"""A worker's status file: which partitions it holds and when its last rebalance finished.

``make demo``, tests and ``memstream`` commands read it to know a worker is consuming,
instead of sleeping for a guessed time.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import orjson


def status_path(datadir: str | Path) -> Path:
    return Path(datadir) / "status.json"


def write_status(datadir: str | Path, **fields: Any) -> None:
    path = status_path(datadir)
    path.parent.mkdir(parents=True, exist_ok=True)
    current = read_status(datadir) or {}
    current.update(fields, pid=os.getpid(), updated_at=time.time())
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(current))
    os.replace(tmp, path)  # atomic: readers never see half a file


def read_status(datadir: str | Path) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = orjson.loads(status_path(datadir).read_bytes())
        return data
    except (FileNotFoundError, orjson.JSONDecodeError):
        return None


def wait_until_ready(
    datadir: str | Path, timeout: float = 60.0, after: float = 0.0
) -> dict[str, Any]:
    """Block until the worker finished a rebalance (after ``after``, a time.time() value)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = read_status(datadir)
        if status and status.get("rebalance_complete_at", 0) > after:
            return status
        time.sleep(0.1)
    raise TimeoutError(f"worker in {datadir} did not become ready within {timeout:.0f}s")


def record_worker(settings: Any, **fields: Any) -> Path:
    """Where CLI commands find the running worker of this data directory."""
    path = Path(settings.data_dir) / "worker.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps({**fields, "pid": os.getpid(), "started_at": time.time()}))
    os.replace(tmp, path)
    return path


def running_worker(data_dir: str | Path) -> dict[str, Any] | None:
    """The recorded worker of ``data_dir`` if its process is still alive (and not a zombie)."""
    try:
        info: dict[str, Any] = orjson.loads((Path(data_dir) / "worker.json").read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return None
    try:
        pid = int(info["pid"])
        os.kill(pid, 0)
    except (OSError, KeyError, ValueError):
        return None
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists() and stat.read_text().split(") ", 1)[-1].startswith("Z"):
        return None
    return info
