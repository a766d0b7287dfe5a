"""Writing an agent's decisions: apply each event to the partition's state, send it to the
partition's memory log, and wait until the broker has all of them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any

from schemas.envelope import Envelope, encode, record_headers
from streams.partition_state import PartitionState
from streams.sinks import Sink

#: sends in flight, each completing when the broker has its event
Sent = list[Awaitable[Any]]


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
