"""``memstream worker --restarts N``: the worker run as a child process and started again
after a crash, for a worker run by hand (a process supervisor does this in production:
``restart: unless-stopped`` in infra/compose.yaml).

An exception that escapes an agent stops the worker with exit status 1 (``streams/app.py``
``stop_on_crash``) and a restart reads the turns it held again; without a supervisor the
worker stayed stopped until someone noticed. The parent starts the same command again after
a crash (any exit but 0, or a signal such as SIGKILL), waiting 1, 2, 4 ... up to 30 seconds
between starts, at most ``N`` times in a row: a child that ran ``STEADY_SECONDS`` resets
the count, so a worker that crashes once a day keeps running and one that cannot start
gives up with the child's status. SIGTERM, SIGINT and SIGHUP go to the child, which runs in
its own process group so that a Ctrl-C in the terminal reaches it once (through the parent),
and the parent ends with it: a graceful stop is never taken for a crash.

``restart_delay`` and ``next_attempt`` are pure; ``supervise`` is the shell.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import Final

from memstream.infra.broker import die_with_parent

#: set in the child's environment: the worker it runs is supervised, not a supervisor (it
#: gets the same arguments, ``--restarts`` too)
SUPERVISED_ENV: Final = "MEMSTREAM_SUPERVISED"
FIRST_DELAY: Final = 1.0
MAX_DELAY: Final = 30.0
#: a child that ran this long was not crashing in a loop: the count starts again
STEADY_SECONDS: Final = 60.0


def restart_delay(attempt: int, first: float = FIRST_DELAY, cap: float = MAX_DELAY) -> float:
    """Seconds to wait before restart number ``attempt`` (1-based): doubling from ``first``,
    at most ``cap``."""
    if attempt < 1:
        raise ValueError("attempt counts from 1")
    return min(cap, first * 2.0 ** min(attempt - 1, 30))


def next_attempt(returncode: int, ran_seconds: float, attempts: int, limit: int) -> int | None:
    """The number of the restart to make after a child ended with ``returncode`` having run
    ``ran_seconds``, ``attempts`` restarts made in a row before; None: do not restart (a
    graceful stop, or ``limit`` restarts in a row used up)."""
    if returncode == 0:
        return None
    n = 1 if ran_seconds >= STEADY_SECONDS else attempts + 1
    return n if n <= limit else None


def exit_status(returncode: int) -> int:
    """A child's return code as this process's exit status: killed by signal N, 128 + N,
    as a shell reports it (a negative status would wrap around)."""
    return returncode if returncode >= 0 else 128 - returncode


def child_command(argv: Sequence[str]) -> list[str]:
    """The command that runs this process again: the same module (``python -m``) or
    script, with ``argv`` (the arguments after the program)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name:
        name = spec.name.removesuffix(".__main__")
        return [sys.executable, "-m", name, *argv]
    return [sys.executable, sys.argv[0], *argv]


def supervise(command: Sequence[str], limit: int, env: Mapping[str, str] | None = None) -> int:
    """Run ``command`` and start it again after each crash (see the module doc); the exit
    status is the last child's (0 after a stop by signal)."""
    stopping = threading.Event()
    child: subprocess.Popen[bytes] | None = None

    def forward(signum: int, _frame: FrameType | None) -> None:
        stopping.set()
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    stops = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    previous = {s: signal.signal(s, forward) for s in stops}
    attempts = 0
    try:
        while True:
            started = time.monotonic()
            child = subprocess.Popen(
                list(command),
                env={**(env or os.environ), SUPERVISED_ENV: "1"},
                process_group=0,
                preexec_fn=die_with_parent,  # a killed supervisor leaves no worker behind
            )
            if stopping.is_set():  # a signal while the child started: it missed it
                child.terminate()
            code = child.wait()
            if stopping.is_set():
                return 0 if code == 0 or -code in stops else exit_status(code)
            attempt = next_attempt(code, time.monotonic() - started, attempts, limit)
            if attempt is None:
                if code != 0:
                    print(
                        f"memstream worker: stopped with status {code} after {attempts} "
                        f"restart(s) in a row; not restarting (--restarts {limit})",
                        file=sys.stderr,
                        flush=True,
                    )
                return exit_status(code)
            attempts = attempt
            delay = restart_delay(attempt)
            print(
                f"memstream worker: the worker stopped with status {code}; restart {attempt} "
                f"of {limit} in {delay:g} s",
                file=sys.stderr,
                flush=True,
            )
            if stopping.wait(delay):
                return 0
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
