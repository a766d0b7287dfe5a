"""The validation gate every agent reads through: decode, or dead-letter and carry on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memstream.schemas._fields import utc_now
from memstream.schemas.envelope import Envelope, Limits, decode
from memstream.schemas.errors import EventValidationError
from memstream.streams.commits import held
from memstream.streams.deadletter import dead_letter_from, encode_dead_letter
from memstream.streams.sinks import Sink


def intake_time(message: Any) -> datetime:
    """When the record reached the broker (its timestamp), never later than this clock: a
    replay decides as the first reading did, and a forged timestamp cannot widen the bound."""
    now = utc_now()
    stamp = getattr(message, "timestamp", None)
    if not stamp:
        return now
    try:
        return min(datetime.fromtimestamp(float(stamp), UTC), now)
    except (OverflowError, OSError, ValueError):
        return now


@dataclass
class IntakeStats:
    accepted: int = 0
    dead_lettered: int = 0


def dead_letter_record(
    message: Any, error: Exception, agent: str
) -> tuple[bytes | None, bytes, list[tuple[str, bytes]]]:
    """(key, value, headers) of the dead letter for a faust message that failed."""
    dl = dead_letter_from(
        error,
        original=message.value if isinstance(message.value, bytes) else bytes(message.value or b""),
        original_key=message.key,
        source_topic=message.topic,
        partition=message.partition,
        offset=message.offset,
        agent=agent,
        failed_at=utc_now(),
    )
    value, headers = encode_dead_letter(dl)
    return dl.original_key, value, headers  # (a key past MAX_KEPT_KEY is cut there too)


class DeadLetters:
    """Sends an agent's rejects to the dead-letter topic and waits until they are durable,
    so the source offset is committed only after its dead letter exists."""

    def __init__(self, sink: Sink, topic: str, agent: str) -> None:
        self.sink, self.topic, self.agent = sink, topic, agent

    async def send(self, message: Any, error: Exception) -> None:
        key, value, headers = dead_letter_record(message, error, self.agent)
        await (await self.sink.send(self.topic, key, value, headers=headers))


async def decoded(
    stream: Any,
    dlq: DeadLetters,
    limits: Limits,
    stats: IntakeStats | None = None,
    expected_types: frozenset[str] | None = None,
) -> AsyncIterator[tuple[Any, Envelope[Any]]]:
    """Yield (faust event, envelope) for valid records; route the rest to the DLQ.

    Each record is held (``streams.commits.held``) from its arrival until its step is done,
    i.e. the caller asked for the next one."""
    consumer = stream.app.consumer
    async for event in stream.events():
        message = event.message
        with held([message], consumer):
            try:
                raw = message.value
                if not isinstance(raw, bytes):
                    raise EventValidationError("bad_json", "record has no value")
                env = decode(raw, limits=limits)
                if expected_types is not None and env.type not in expected_types:
                    raise EventValidationError(
                        "wrong_topic", f"{env.type} does not belong on {message.topic}", "type"
                    )
            except EventValidationError as e:
                await dlq.send(message, e)
                if stats:
                    stats.dead_lettered += 1
                continue
            if stats:
                stats.accepted += 1
            yield event, env
