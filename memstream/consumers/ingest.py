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
from pathlib import Path
from typing import Any, BinaryIO

from memstream.consumers.producer import AsyncProducer, PublishError, turn_event
from memstream.schemas._fields import parse_datetime
from memstream.schemas.envelope import Envelope, loads
from memstream.schemas.errors import EventValidationError

#: this many turns in a row not acknowledged: the broker is gone, stop (one message)
MAX_BROKER_ERRORS = 20
REQUIRED = ("namespace", "session_id", "turn_id", "role", "speaker", "text", "occurred_at")
ALLOWED = frozenset(REQUIRED) | {"metadata"}
MAX_KEPT_REJECTS = 1000


class BrokerUnavailable(RuntimeError):
    """The broker stopped acknowledging: ingest stopped; the message says where and why."""

    def __init__(self, message: str, report: IngestReport) -> None:
        super().__init__(message)
        self.report = report


@dataclass
class IngestReport:
    lines: int = 0
    published: int = 0
    rejected: int = 0
    rejects: list[tuple[int, str]] = field(default_factory=list)  # the first MAX_KEPT_REJECTS
    #: lines the broker did not acknowledge (not in ``rejected``: the line was fine)
    unacknowledged: int = 0
    first_unacknowledged: int | None = None
    seconds: float = 0.0
    #: event ids of the acknowledged turns per namespace (what `--wait` waits for)
    published_ids: dict[str, list[str]] = field(default_factory=dict)

    def reject(self, line_no: int, reason: str) -> None:
        self.rejected += 1
        if len(self.rejects) < MAX_KEPT_REJECTS:
            self.rejects.append((line_no, reason))


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
        occurred_at=parse_datetime(obj["occurred_at"], "occurred_at", naive_is_utc=True),
        metadata=meta,
        producer=producer,
        settings=settings,
    )


def _quiet(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # read, so asyncio does not log each one


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
    max_broker_errors: int = MAX_BROKER_ERRORS,
) -> IngestReport:
    """Publish every valid line; a line the broker does not acknowledge is counted (not
    reported line by line), and ``max_broker_errors`` of them in a row stop the ingest with
    one ``BrokerUnavailable`` naming the first line not known to be stored."""
    report = IngestReport()
    started = time.monotonic()
    in_flight: collections.deque[tuple[int, asyncio.Future[Any], str, str]] = collections.deque()
    in_a_row = 0

    def broker_error(line_no: int, error: BaseException, *, at_once: bool = False) -> None:
        nonlocal in_a_row
        in_a_row = max_broker_errors if at_once else in_a_row + 1
        report.unacknowledged += 1
        if report.first_unacknowledged is None:
            report.first_unacknowledged = line_no
        if in_a_row >= max_broker_errors:
            for _line, fut, _ns, _id in in_flight:
                fut.add_done_callback(_quiet)
            report.seconds = time.monotonic() - started
            raise BrokerUnavailable(
                f"stopped at line {line_no}: the broker at {producer.bootstrap} "
                + (
                    "took no more turns"
                    if at_once
                    else f"did not acknowledge {in_a_row} turns in a row"
                )
                + f" ({type(error).__name__}: {error}). "
                f"{report.published} turns were acknowledged; from line "
                f"{report.first_unacknowledged} on they are not known to be stored: ingest the "
                "file again once the broker is back (turns stored already are recognised by "
                "their ids)",
                report,
            )

    async def settle_oldest() -> None:
        nonlocal in_a_row
        line_no, fut, namespace, event_id = in_flight.popleft()
        try:
            await fut
        except Exception as e:  # the broker did not take it
            broker_error(line_no, e)
            return
        in_a_row = 0
        report.published += 1
        report.published_ids.setdefault(namespace, []).append(event_id)

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
            try:
                sent = await producer.send(env)
            except PublishError as e:  # no buffer space for a request timeout: it is gone
                broker_error(line_no, e, at_once=True)
                continue
            in_flight.append((line_no, sent, env.namespace, env.event_id))
            while len(in_flight) >= window:
                await settle_oldest()
            if on_progress:
                on_progress(size_done, report)
    while in_flight:
        await settle_oldest()
    report.seconds = time.monotonic() - started
    return report
