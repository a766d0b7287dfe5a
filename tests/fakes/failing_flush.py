"""``python -m tests.fakes.failing_flush worker ...``: ``memstream worker`` whose first flush
on the write path fails when its records are confirmed, as a write the broker rejects for
good (or whose retries ran out) would. It stands in for any exception that escapes an agent;
the records themselves are sent as usual. With ``MEMSTREAM_FAIL_ONCE_MARKER`` (a file path)
it fails once across processes: the first process that finds no file there creates it and
fails, so a worker started again after the crash runs on (``--restarts``)."""

from __future__ import annotations

import os
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from memstream.consumers.cli import main
from memstream.streams.write_path import Job, WritePath

_settle = WritePath._settle
_failed: list[bool] = []


async def _failing_settle(self: WritePath, pending: list[Awaitable[Any]], jobs: list[Job]) -> None:
    if jobs and not _failed and _first_anywhere():  # a flush (not dead letters alone), once
        _failed.append(True)
        raise ConnectionError("injected: the broker did not confirm the flush's records")
    await _settle(self, pending, jobs)


def _first_anywhere() -> bool:
    marker = os.environ.get("MEMSTREAM_FAIL_ONCE_MARKER")
    if not marker:
        return True
    try:
        Path(marker).open("x").close()
    except FileExistsError:
        return False
    return True


WritePath._settle = _failing_settle  # type: ignore[method-assign]

if __name__ == "__main__":
    raise SystemExit(main())
