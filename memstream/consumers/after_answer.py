"""Sends made after an answer was given (a recall's access record, its telemetry).

The caller already has its answer, so a send that fails cannot be reported to it: it is
counted (``failed``, on ``/metrics``) and logged. Each send is kept until done, so it is
not collected mid-flight, and ``drain`` waits for them before the producer stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable

log = logging.getLogger(__name__)


class AfterAnswer:
    def __init__(self, what: str) -> None:
        self.what = what  # named in the log line of a failed send
        self.failed = 0
        self._pending: set[asyncio.Future[object]] = set()

    def send(self, sending: Awaitable[object]) -> None:
        future = asyncio.ensure_future(sending)
        self._pending.add(future)
        future.add_done_callback(self._done)

    def _done(self, future: asyncio.Future[object]) -> None:
        self._pending.discard(future)
        if not future.cancelled() and (e := future.exception()) is not None:
            self.failed += 1
            log.warning("%s not sent: %s", self.what, e)

    async def drain(self) -> None:
        """Waits until everything sent so far is done."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)
