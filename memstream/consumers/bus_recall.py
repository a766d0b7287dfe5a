"""Recall over the bus: publish RecallRequested, wait for the RecallAnswered that carries
the same correlation id on the reply topic. For consumers that live on Kafka."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from memstream.consumers.auth import TOKEN_HEADER
from memstream.consumers.producer import AsyncProducer
from memstream.infra.kafka_auth import client_options
from memstream.infra.settings import Settings
from memstream.schemas.envelope import Envelope, decode, make_event
from memstream.schemas.events import RecallAnswered, RecallRequested
from memstream.schemas.topics import BY_ROLE


async def recall_over_bus(
    settings: Settings,
    namespace: str,
    query: str,
    *,
    k: int = 10,
    as_of: datetime | None = None,
    at: datetime | None = None,
    timeout: float = 30.0,
    token: str | None = None,
    filters: dict[str, Any] | None = None,
    include_low_confidence: bool = False,
) -> Envelope[RecallAnswered]:
    """``token``: a key for ``namespace``, required when the worker has API keys
    (MEMSTREAM_API_KEYS); sent in the ``memstream-token`` header, never in the event."""
    correlation = f"c-{uuid.uuid4().hex}"
    reply_topic = BY_ROLE["recall_replies"].name(settings.topic_prefix)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.bootstrap(),
        enable_auto_commit=False,
        group_id=None,
        **client_options(settings),
    )
    await consumer.start()
    try:
        parts = consumer.partitions_for_topic(reply_topic) or set()
        if not parts:
            await consumer.force_metadata_update()
            parts = consumer.partitions_for_topic(reply_topic) or set()
        tps = [TopicPartition(reply_topic, p) for p in sorted(parts)]
        consumer.assign(tps)
        await consumer.seek_to_end(*tps)  # only answers to this request matter
        for tp in tps:
            await consumer.position(tp)
        request = make_event(
            RecallRequested(
                query_id=correlation,
                query=query,
                k=k,
                as_of=as_of,
                filters=dict(filters or {}),
                at=at,
                include_low_confidence=include_low_confidence,
            ),
            namespace=namespace,
            correlation_id=correlation,
            limits=settings.limits,
        )
        async with AsyncProducer(settings, producer_name="bus-recall") as producer:
            await producer.publish(
                request, headers=[(TOKEN_HEADER, token.encode())] if token else ()
            )
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            batch: dict[Any, list[Any]] = await consumer.getmany(timeout_ms=500)
            for records in batch.values():
                for record in records:
                    if record.key == correlation.encode():
                        env = decode(record.value, limits=settings.limits)
                        if env.correlation_id == correlation:
                            return env
        raise TimeoutError(f"no RecallAnswered for {correlation} within {timeout:.0f}s")
    finally:
        await consumer.stop()
