"""Where recalls run: a bounded pool of their own threads with a bounded queue.

Recalls are CPU work (search, rescoring, MMR) that used to share the default executor with
everything else; a burst of them then queued without bound. Here at most ``threads`` run at
once and ``max_pending`` more wait; past that an HTTP caller is told to come back later
(429 with Retry-After) instead of piling work onto the worker that also runs the write path.
The Kafka responder waits for a slot instead: its input is already a queue.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


class RecallBusy(Exception):
    """Every slot is taken; try again after ``retry_after`` seconds."""

    def __init__(self, retry_after: int, admitted: int) -> None:
        super().__init__(
            f"{admitted} recalls are running or queued (the most this worker takes); "
            f"retry after {retry_after}s"
        )
        self.retry_after = retry_after


class RecallPool:
    def __init__(self, threads: int = 2, max_pending: int = 8) -> None:
        if threads < 1 or max_pending < 0:
            raise ValueError("recall_threads must be >= 1 and recall_max_pending >= 0")
        self.threads, self.max_pending = threads, max_pending
        self.slots = threads + max_pending
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="recall")
        self.admitted = 0  # running + queued
        self.rejected = 0
        self._freed: asyncio.Condition | None = None
        self._mean_s = 0.05  # moving mean of one recall's duration, for Retry-After

    def retry_after(self) -> int:
        """Seconds until the queue ahead has likely drained (at least 1)."""
        return max(1, math.ceil(self._mean_s * self.slots / self.threads))

    async def run(self, fn: Callable[[], T], *, wait: bool = False) -> T:
        """Run ``fn`` on the pool; raise RecallBusy when full (or, with ``wait``, queue)."""
        if self._freed is None:
            self._freed = asyncio.Condition()
        if self.admitted >= self.slots:
            if not wait:
                self.rejected += 1
                raise RecallBusy(self.retry_after(), self.admitted)
            async with self._freed:
                await self._freed.wait_for(lambda: self.admitted < self.slots)
        self.admitted += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self.executor, self._timed, fn)
        finally:
            self.admitted -= 1
            async with self._freed:
                self._freed.notify()

    def _timed(self, fn: Callable[[], T]) -> T:
        started = time.perf_counter()
        try:
            return fn()
        finally:
            self._mean_s = 0.9 * self._mean_s + 0.1 * (time.perf_counter() - started)

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
