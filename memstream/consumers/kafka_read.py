"""Read a topic from the beginning to its current end (for the CLI, demo and tests)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition


async def read_topic(
    bootstrap: str,
    topic: str,
    *,
    timeout: float = 10.0,
    idle: float = 0.3,
    auth: Mapping[str, Any] | None = None,
    stuck: list[str] | None = None,
) -> AsyncIterator[Any]:
    """Yield every record of ``topic`` up to its end, then stop.

    The end is where the reported end offsets were reached *and* a further poll of
    ``idle`` seconds brings nothing: the embedded broker reports the end of a batched
    write as the batch's first offset + 1, so end offsets alone would stop too early.
    No consumer group: reading is side-effect free and never competes with workers.
    ``auth``: the client options of ``infra.kafka_auth.client_options``.
    ``stuck``: when given, partitions that report records but return none for ``timeout``
    are noted there and the read ends (the embedded broker, just restarted, can report a
    record it never serves); otherwise that raises ``TimeoutError``.
    """
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None, **(auth or {})
    )
    await consumer.start()
    try:
        partitions = consumer.partitions_for_topic(topic) or set()
        if not partitions:
            await consumer.force_metadata_update()
            partitions = consumer.partitions_for_topic(topic) or set()
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        if not tps:
            return
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        behind = {tp for tp in tps if ends[tp] > 0}
        while True:
            wait = timeout if behind else idle
            batch = await consumer.getmany(timeout_ms=int(wait * 1000))
            if not batch:
                if behind:
                    message = (
                        f"no records from {topic} for {timeout:.0f}s while "
                        f"{len(behind)} partitions lag"
                    )
                    if stuck is None:
                        raise TimeoutError(message)
                    for tp in sorted(behind):
                        at = await consumer.position(tp)
                        stuck.append(
                            f"{tp.topic}[{tp.partition}] reports {ends[tp]} records, "
                            f"served none from offset {at}"
                        )
                return
            for tp, records in batch.items():
                for record in records:
                    yield record
                if records and records[-1].offset + 1 >= ends[tp]:
                    behind.discard(tp)
    finally:
        await consumer.stop()
