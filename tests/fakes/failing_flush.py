"""``python -m tests.fakes.failing_flush worker ...``: ``memstream worker`` whose first flush
on the write path fails when its records are confirmed, as a write the broker rejects for
good (or whose retries ran out) would. It stands in for any exception that escapes an agent;
the records themselves are sent as usual."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from memstream.consumers.cli import main
from memstream.streams.write_path import Job, WritePath

_settle = WritePath._settle
_failed: list[bool] = []


async def _failing_settle(self: WritePath, pending: list[Awaitable[Any]], jobs: list[Job]) -> None:
    if jobs and not _failed:  # a flush (not dead letters alone), once
        _failed.append(True)
        raise ConnectionError("injected: the broker did not confirm the flush's records")
    await _settle(self, pending, jobs)


WritePath._settle = _failing_settle  # type: ignore[method-assign]

if __name__ == "__main__":
    raise SystemExit(main())
