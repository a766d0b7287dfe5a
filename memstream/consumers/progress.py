"""A small stderr progress line: counts, rate and, when the total is known, a bar."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        every: float = 0.2,
    ) -> None:
        self.label = label
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.every = every
        self.count = 0
        self.started = time.monotonic()
        self._last = 0.0

    def advance(self, n: int = 1, *, extra: str = "") -> None:
        self.count += n
        now = time.monotonic()
        if self.enabled and now - self._last >= self.every:
            self._last = now
            self._draw(now, extra)

    def _draw(self, now: float, extra: str) -> None:
        elapsed = max(now - self.started, 1e-9)
        rate = self.count / elapsed
        if self.total:
            frac = min(self.count / self.total, 1.0)
            bar = "#" * int(frac * 30)
            head = f"{self.label} [{bar:<30}] {self.count:,}/{self.total:,} {frac:6.1%}"
        else:
            head = f"{self.label} {self.count:,}"
        self.stream.write(f"\r{head}  {rate:,.0f}/s {extra}\x1b[K")
        self.stream.flush()

    def close(self, extra: str = "") -> None:
        if self.enabled:
            self._draw(time.monotonic(), extra)
            self.stream.write("\n")
            self.stream.flush()
