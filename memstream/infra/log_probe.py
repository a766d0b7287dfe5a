"""What the broker says about the log, for health checks: reachable or not, which topics
exist, each partition's end offset and a consumer group's committed offsets.

End offsets come from ListOffsets, then from the high watermark of one fetch at that
offset: the embedded broker reports the end of a batched write as the batch's first
offset + 1 in ListOffsets, while a fetch response carries the true end (on Apache Kafka
both agree). A probe is bounded by ``timeout``; a probe that fails drops its clients, so
the next one starts afresh (after a broker restart, say).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from memstream.infra.log_identity import epoch_of


@dataclass
class LogObservation:
    at: float  # time.time() when the probe finished
    reachable: bool
    error: str | None = None
    millis: float = 0.0
    missing: list[str] = field(default_factory=list)  # wanted topics the broker lacks
    ends: dict[str, int] = field(default_factory=dict)  # "topic/partition" -> end offset
    committed: dict[str, int] = field(default_factory=dict)  # the group's, where it has one
    epoch: str | None = None  # the log's identity (infra/log_identity.py); None: none found


def key(tp: TopicPartition) -> str:
    return f"{tp.topic}/{tp.partition}"


class LogProbe:
    def __init__(
        self,
        bootstrap: str,
        topics: Sequence[str],
        *,
        group: str | None = None,
        group_topics: Sequence[str] = (),
        identity_topic: str | None = None,
        auth: Mapping[str, Any] | None = None,
    ) -> None:
        """``identity_topic``: its first record is read for the log's epoch each time."""
        self.bootstrap = bootstrap
        self.identity_topic = identity_topic
        self.topics = list(topics) + ([identity_topic] if identity_topic else [])
        self.group = group
        self.group_topics = set(group_topics)
        self.auth = dict(auth or {})
        self._reader: AIOKafkaConsumer | None = None
        self._group: AIOKafkaConsumer | None = None

    async def observe(self, timeout: float = 2.0) -> LogObservation:
        started = time.monotonic()
        try:
            obs = await asyncio.wait_for(self._observe(), timeout)
        except Exception as e:  # unreachable, timed out, refused: the broker is not usable
            await self.close()
            error = f"no answer within {timeout:g} s" if isinstance(e, TimeoutError) else str(e)
            return LogObservation(
                time.time(), False, f"{type(e).__name__}: {error}"[:300] if error else None
            )
        obs.millis = (time.monotonic() - started) * 1000
        return obs

    async def _consumer(self, group: str | None) -> AIOKafkaConsumer:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=group,
            enable_auto_commit=False,
            auto_offset_reset="none",
            fetch_max_wait_ms=50,
            max_partition_fetch_bytes=64 * 1024,
            request_timeout_ms=5000,
            metadata_max_age_ms=5000,
            **self.auth,
        )
        try:
            await consumer.start()
        except BaseException:
            with contextlib.suppress(Exception):
                await consumer.stop()
            raise
        return consumer

    async def _observe(self) -> LogObservation:
        if self._reader is None:
            self._reader = await self._consumer(None)
        reader = self._reader
        cluster = await reader._client.fetch_all_metadata()
        present = cluster.topics()
        missing = [t for t in self.topics if t not in present]
        tps = [
            TopicPartition(t, p)
            for t in self.topics
            if t in present
            for p in sorted(cluster.partitions_for_topic(t) or ())
        ]
        obs = LogObservation(time.time(), True, missing=missing)
        # committed offsets first: ends only grow, so an offset read before its end can be
        # compared with it (the other way round a fresh commit could look past the end)
        group_tps = [tp for tp in tps if tp.topic in self.group_topics]
        if self.group and group_tps:
            if self._group is None:
                self._group = await self._consumer(self.group)
            offsets = await self._group._coordinator.fetch_committed_offsets(group_tps)
            obs.committed = {
                key(tp): meta.offset for tp, meta in offsets.items() if meta.offset >= 0
            }
        obs.ends, first = await self._ends(reader, tps)
        if self.identity_topic is not None:
            obs.epoch = epoch_of(first)
            obs.ends.pop(f"{self.identity_topic}/0", None)
        obs.at = time.time()
        return obs

    async def _ends(
        self, reader: AIOKafkaConsumer, tps: list[TopicPartition]
    ) -> tuple[dict[str, int], bytes | None]:
        """End offsets, and the first record of the identity topic."""
        if not tps:
            return {}, None
        listed: dict[TopicPartition, int] = await reader.end_offsets(tps)
        if set(reader.assignment()) != set(tps):
            reader.assign(tps)
        identity = TopicPartition(self.identity_topic or "", 0)
        for tp in tps:
            reader.seek(tp, 0 if tp == identity else listed[tp])
        first: bytes | None = None
        wants_first = listed.get(identity, 0) > 0
        reader.resume(*tps)
        asked = int(time.time() * 1000)
        try:
            # one fetch round at the listed ends: its responses carry the high watermarks
            while (wants_first and first is None) or any(
                (reader.last_poll_timestamp(tp) or 0) < asked for tp in tps
            ):
                batch = await reader.getmany(timeout_ms=50, max_records=100)
                if first is None and batch.get(identity):
                    first = batch[identity][0].value
        finally:
            reader.pause(*tps)
        return {key(tp): max(listed[tp], reader.highwater(tp) or 0) for tp in tps}, first

    async def close(self) -> None:
        for consumer in (self._reader, self._group):
            if consumer is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(consumer.stop(), 2.0)
        self._reader = self._group = None
