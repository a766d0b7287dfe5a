"""Writing an agent's decisions: apply each event to the partition's state, send it to the
partition's memory log, and wait until the broker has all of them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable, Sequence
from typing import Any

from memstream.schemas._fields import utc_now
from memstream.schemas.envelope import Envelope, Limits, encode, make_event, record_headers
from memstream.schemas.ids import derived_id
from memstream.streams.partition_state import PartitionState
from memstream.streams.sinks import Sink

#: sends in flight, each completing when the broker has its event
Sent = list[Awaitable[Any]]


def caused_by(
    cause: Envelope[Any],
    payloads: Iterable[tuple[Any, Sequence[str]]],
    *,
    producer: str,
    kind: str,
    limits: Limits,
) -> list[Envelope[Any]]:
    """Events caused by ``cause``, at its event time and in its session and correlation; each
    id derives from the cause, ``kind`` and the payload's tags, so a re-run repeats them."""
    return [
        make_event(
            payload,
            namespace=cause.namespace,
            session_id=cause.session_id,
            occurred_at=cause.occurred_at,
            causation_id=cause.event_id,
            correlation_id=cause.correlation_id,
            producer=producer,
            recorded_at=utc_now(),
            event_id=derived_id(cause.occurred_at, kind, cause.event_id, *tags),
            limits=limits,
        )
        for payload, tags in payloads
    ]


async def send_all(
    state: PartitionState, envs: Sequence[Envelope[Any]], sink: Sink, memory_topic: str
) -> list[Awaitable[Any]]:
    """Apply and send; the returned futures complete when the broker has each event."""
    pending: list[Awaitable[Any]] = []
    for env in envs:
        state.apply(env)
        pending.append(
            await sink.send(
                memory_topic,
                env.key,
                encode(env),
                partition=state.partition,
                headers=record_headers(env),
            )
        )
    return pending


async def emit(
    state: PartitionState, envs: Sequence[Envelope[Any]], sink: Sink, memory_topic: str
) -> None:
    await asyncio.gather(*await send_all(state, envs, sink, memory_topic))
