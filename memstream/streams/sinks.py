"""Where agents write: a tiny sink contract, with the Kafka producer as the real adapter and
an in-memory sink as the test double (so ``agent.test_context()`` needs no broker)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Protocol

Headers = list[tuple[str, bytes]]


class Sink(Protocol):
    async def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes,
        *,
        partition: int | None = None,
        headers: Headers | None = None,
    ) -> Awaitable[Any]:
        """Queue a record; the awaitable resolves when it is durable."""
        ...


class ProducerSink:
    """Writes through the faust app's producer (acks=all, batched by the client)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes,
        *,
        partition: int | None = None,
        headers: Headers | None = None,
    ) -> Awaitable[Any]:
        result: Awaitable[Any] = await self.app.producer.send(
            topic, key, value, partition, None, headers
        )
        return result


@dataclass(frozen=True, slots=True)
class SentRecord:
    topic: str
    key: bytes | None
    value: bytes
    partition: int | None
    headers: Headers


@dataclass
class MemorySink:
    """Keeps what was sent, in order; every send is durable at once."""

    records: list[SentRecord] = field(default_factory=list)

    async def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes,
        *,
        partition: int | None = None,
        headers: Headers | None = None,
    ) -> Awaitable[Any]:
        self.records.append(SentRecord(topic, key, value, partition, list(headers or [])))
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    def on(self, topic: str) -> list[SentRecord]:
        return [r for r in self.records if r.topic == topic]
