"""``memstream ingest FILE.jsonl``: publish conversation turns from a JSONL file.

One turn per line with ``namespace, session_id, turn_id, role, speaker, text,
occurred_at`` (ISO 8601; a time without an offset is taken as UTC) and optional
``metadata``. Memory stays bounded whatever the file size: lines are streamed and at
most ``window`` publishes are in flight. A bad line is reported with its number and
reason and the rest carry on.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from consumers.producer import AsyncProducer, turn_event
from schemas.envelope import Envelope, loads
from schemas.errors import EventValidationError

REQUIRED = ("namespace", "session_id", "turn_id", "role", "speaker", "text", "occurred_at")
ALLOWED = frozenset(REQUIRED) | {"metadata"}
MAX_KEPT_REJECTS = 1000


@dataclass
class IngestReport:
    lines: int = 0
    published: int = 0
    rejected: int = 0
    rejects: list[tuple[int, str]] = field(default_factory=list)  # the first MAX_KEPT_REJECTS
    seconds: float = 0.0
    #: event ids of the acknowledged turns per namespace (what `--wait` waits for)
    published_ids: dict[str, list[str]] = field(default_factory=dict)

    def reject(self, line_no: int, reason: str) -> None:
        self.rejected += 1
        if len(self.rejects) < MAX_KEPT_REJECTS:
            self.rejects.append((line_no, reason))


def _parse_time(value: Any) -> datetime:
    if not isinstance(value, str):
        raise EventValidationError("wrong_type", "expected an ISO 8601 string", "occurred_at")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise EventValidationError(
            "bad_datetime", f"not ISO 8601: {value[:64]!r}", "occurred_at"
        ) from None
    try:
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except OverflowError:
        raise EventValidationError(
            "bad_datetime", f"out of range in UTC: {value[:64]!r}", "occurred_at"
        ) from None


def parse_line(raw: bytes, producer: str, settings: Any) -> Envelope[Any]:
    """One JSONL line -> a validated turn event (raises EventValidationError)."""
    obj = loads(raw)
    if not isinstance(obj, dict):
        raise EventValidationError("wrong_type", "each line must be a JSON object")
    missing = [k for k in REQUIRED if k not in obj]
    if missing:
        raise EventValidationError("missing_field", f"missing {', '.join(missing)}")
    unknown = obj.keys() - ALLOWED
    if unknown:
        raise EventValidationError(
            "unknown_field", f"unknown field(s): {', '.join(sorted(unknown))[:200]}"
        )
    for key in ("namespace", "session_id", "turn_id", "role", "speaker", "text"):
        if not isinstance(obj[key], str):
            raise EventValidationError("wrong_type", "expected a string", key)
    meta = obj.get("metadata") or {}
    if not isinstance(meta, dict):
        raise EventValidationError("wrong_type", "expected an object", "metadata")
    return turn_event(
        namespace=obj["namespace"],
        session_id=obj["session_id"],
        turn_id=obj["turn_id"],
        role=obj["role"],
        speaker=obj["speaker"],
        text=obj["text"],
        occurred_at=_parse_time(obj["occurred_at"]),
        metadata=meta,
        producer=producer,
        settings=settings,
    )


def _lines(fh: BinaryIO) -> Iterator[tuple[int, bytes]]:
    for number, line in enumerate(fh, start=1):
        stripped = line.strip()
        if stripped:
            yield number, stripped


async def ingest_file(
    path: Path,
    producer: AsyncProducer,
    *,
    window: int = 5000,
    on_progress: Callable[[int, IngestReport], None] | None = None,
    on_reject: Callable[[int, str], None] | None = None,
) -> IngestReport:
    report = IngestReport()
    started = time.monotonic()
    in_flight: collections.deque[tuple[int, asyncio.Future[Any], str, str]] = collections.deque()

    async def settle_oldest() -> None:
        line_no, fut, namespace, event_id = in_flight.popleft()
        try:
            await fut
            report.published += 1
            report.published_ids.setdefault(namespace, []).append(event_id)
        except Exception as e:  # the broker refused this record: report it, keep going
            reason = f"not acknowledged: {e}"
            report.reject(line_no, reason)
            if on_reject:
                on_reject(line_no, reason)

    with path.open("rb") as fh:
        size_done = 0
        for line_no, raw in _lines(fh):
            report.lines = line_no
            size_done += len(raw) + 1
            try:
                env = parse_line(raw, producer.producer_name, producer.settings)
            except EventValidationError as e:
                report.reject(line_no, str(e))
                if on_reject:
                    on_reject(line_no, str(e))
                continue
            in_flight.append((line_no, await producer.send(env), env.namespace, env.event_id))
            while len(in_flight) >= window:
                await settle_oldest()
            if on_progress:
                on_progress(size_done, report)
    while in_flight:
        await settle_oldest()
    report.seconds = time.monotonic() - started
    return report
