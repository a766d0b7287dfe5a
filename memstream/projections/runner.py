"""Feeding projections from Kafka: no consumer group, positions come from the projection.

Each projection gets its own reader that assigns every partition of its topics and
seeks to the positions the projection recorded, so where to resume is decided by the
store that holds the data, not by a group offset that could disagree with it.

A record the projection cannot apply must not stop it (``apply_records``): the failing batch
is halved until the record stands alone, which is tried once more, then dead-lettered with
its reason and skipped (``Projection.skip`` records its position). Errors of the store or
the broker (``transient``) are raised instead: the owner retries from the recorded
positions and ``health`` says since when.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import duckdb
from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition

from memstream.projections.port import ApplyStats, LogRecord, Projection

log = logging.getLogger("memstream.projections")

#: records that spread a batch's fixed cost well enough: a batch this large never lingers
LINGER_ENOUGH = 1000

#: publishes a record that cannot be applied to the dead-letter topic (reason, record)
DeadLetterSink = Callable[[str, LogRecord], Awaitable[None]]

_TRANSIENT: tuple[type[BaseException], ...] = (
    OSError,  # files, sockets, timeouts (ConnectionError and TimeoutError are OSErrors)
    MemoryError,
    duckdb.IOException,
    duckdb.OutOfMemoryException,
    duckdb.InterruptException,
)


def transient(error: BaseException) -> bool:
    """An error of the store or the network, not of the record: retried from the recorded
    positions (and reported), never dead-lettered.

    Anything else (a bug on an odd input, a value the store refuses) fails again on every
    retry, so retrying it would stall the projection for every tenant; and how many such
    records come in a row is up to whoever writes to the topics, so no count of them may
    stop the projection either."""
    seen: BaseException | None = error
    for _ in range(5):  # the chain of causes, bounded
        if seen is None:
            return False
        if isinstance(seen, _TRANSIENT) or type(seen).__module__.startswith(("httpx", "httpcore")):
            return True
        if type(seen).__name__ == "ResponseHandlingException":  # qdrant-client: no response
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:2000]


@dataclass
class RunnerHealth:
    """What /health reports of one projection (wall clock: it describes this process)."""

    dead_lettered: int = 0
    last_error: str | None = None
    failing_since: float | None = None  # time.time() of the first failure of a streak
    last_progress: float | None = None  # time.time() of the last applied batch


class ProjectionRunner:
    def __init__(
        self,
        bootstrap: str,
        topics: Iterable[str],
        projection: Projection,
        *,
        max_records: int = 5000,
        executor: ThreadPoolExecutor | None = None,
        dead_letter: DeadLetterSink | None = None,
        retry_pause: float = 0.2,
        auth: Mapping[str, Any] | None = None,
        group: str | None = None,
        session_timeout: float = 6.0,
        heartbeat_interval: float = 1.0,
        linger: float = 0.0,
        telemetry: Iterable[str] = (),
        telemetry_wait: float = 0.0,
    ) -> None:
        """``group``: share the topics' partitions with the other readers of that consumer
        group (a store shared by them, whose positions are per partition: a Qdrant server);
        None: read every partition. ``linger``: while records keep coming, batches start at
        least this many seconds apart (see ``run``). ``telemetry``: topics whose records
        alone wait up to ``telemetry_wait`` seconds for more (see ``_gather_telemetry``)."""
        self.bootstrap = bootstrap
        self.group = group
        # as the agents' group (settings broker_session_timeout, broker_heartbeat_interval):
        # a dead node's partitions move within seconds
        self.session_timeout, self.heartbeat_interval = session_timeout, heartbeat_interval
        # held while a batch is applied: a partition is handed over only between batches
        self._applying = asyncio.Lock()
        #: rebalances so far (a shared reader): a batch fetched before one is not applied
        self._generation = 0
        self.auth = dict(auth or {})  # infra.kafka_auth.client_options
        self.topics = list(topics)
        self.projection = projection
        self.max_records = max_records
        self.linger = linger
        self.telemetry = frozenset(telemetry)
        self.telemetry_wait = telemetry_wait
        # One thread owns the store: DuckDB work stays off the event loop and single-threaded.
        self.executor = executor or ThreadPoolExecutor(
            1, thread_name_prefix=f"proj-{projection.name}"
        )
        self.stats = ApplyStats()
        self.caught_up = asyncio.Event()
        self.dead_letter = dead_letter
        self.retry_pause = retry_pause
        self.health = RunnerHealth()
        #: next offset per "topic/partition" applied by this process (for `ingest --wait`)
        self.applied_to: dict[str, int] = {}

    async def _group_consumer(self, group: str) -> AIOKafkaConsumer:
        """A reader in ``group``: on each assignment it seeks every partition it got to the
        position the (shared) store recorded, so a partition resumes where its last owner,
        on any node, stopped; the group's committed offsets are never used."""
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            enable_auto_commit=False,
            group_id=group,
            auto_offset_reset="earliest",
            max_partition_fetch_bytes=4 * 1024 * 1024,
            session_timeout_ms=int(self.session_timeout * 1000),
            heartbeat_interval_ms=int(self.heartbeat_interval * 1000),
            **self.auth,
        )
        runner = self

        class Handover(ConsumerRebalanceListener):  # type: ignore[misc]
            async def on_partitions_revoked(self, revoked: Any) -> None:
                async with runner._applying:  # the batch under way finishes first
                    runner._generation += 1
                    for tp in revoked:
                        runner.applied_to.pop(f"{tp.topic}/{tp.partition}", None)

            async def on_partitions_assigned(self, assigned: Any) -> None:
                positions: dict[tuple[str, int], int] = await runner.run_in_store(
                    runner.projection.positions
                )  # type: ignore[assignment]
                fresh = []
                for tp in assigned:
                    at = positions.get((tp.topic, tp.partition))
                    if at is None:
                        fresh.append(tp)
                        runner.applied_to[f"{tp.topic}/{tp.partition}"] = 0
                    else:
                        consumer.seek(tp, at)
                        runner.applied_to[f"{tp.topic}/{tp.partition}"] = at
                if fresh:
                    await consumer.seek_to_beginning(*fresh)

        await consumer.start()
        consumer.subscribe(self.topics, listener=Handover())
        return consumer

    async def _consumer(self) -> AIOKafkaConsumer:
        if self.group is not None:
            return await self._group_consumer(self.group)
        # auto_offset_reset="earliest": aiokafka resets a freshly assigned partition with the
        # default strategy in the background, and a reply to that request that arrives after
        # a seek_to_beginning() is applied as if it answered the seek. With "latest" (the
        # default) a partition could start at its end and the projection skip records.
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            enable_auto_commit=False,
            group_id=None,
            auto_offset_reset="earliest",
            max_partition_fetch_bytes=4 * 1024 * 1024,
            **self.auth,
        )
        await consumer.start()
        tps: list[TopicPartition] = []
        for topic in self.topics:
            parts = consumer.partitions_for_topic(topic) or set()
            if not parts:
                await consumer.force_metadata_update()
                parts = consumer.partitions_for_topic(topic) or set()
            tps.extend(TopicPartition(topic, p) for p in sorted(parts))
        positions: dict[tuple[str, int], int] = await self.run_in_store(self.projection.positions)  # type: ignore[assignment]
        for (topic, partition), offset in positions.items():
            key = f"{topic}/{partition}"
            self.applied_to[key] = max(self.applied_to.get(key, 0), offset)
        consumer.assign(tps)
        # Every position is requested before the first await, so no background reset runs
        # in between; partitions with no recorded position start at the beginning.
        fresh = [tp for tp in tps if (tp.topic, tp.partition) not in positions]
        for tp in tps:
            if (tp.topic, tp.partition) in positions:
                consumer.seek(tp, positions[(tp.topic, tp.partition)])
        if fresh:
            await consumer.seek_to_beginning(*fresh)
        return consumer

    async def run_in_store(self, fn: Callable[..., object], *args: object) -> object:
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)

    async def _apply(self, batch: dict[TopicPartition, list[object]]) -> None:
        records = [
            LogRecord(tp.topic, tp.partition, r.offset, r.key, r.value, r.timestamp)  # type: ignore[attr-defined]
            for tp, rs in batch.items()
            for r in rs
        ]
        await self.apply_records(records)
        for r in records:
            key = f"{r.topic}/{r.partition}"
            self.applied_to[key] = max(self.applied_to.get(key, 0), r.offset + 1)
        self.health.last_progress = time.time()
        self.health.last_error = None
        self.health.failing_since = None

    async def _try(self, records: Sequence[LogRecord]) -> ApplyStats | Exception:
        """The stats of applying ``records``, or the error if it is the records' fault; an
        error of the store or the network (``transient``) is raised for a retry."""
        try:
            stats = await self.run_in_store(self.projection.apply, records)
        except Exception as e:
            if transient(e):
                raise
            return e
        assert isinstance(stats, ApplyStats)
        return stats

    async def apply_records(self, records: Sequence[LogRecord]) -> ApplyStats:
        """Apply records in log order, stepping over the ones that cannot be applied.

        A failing batch is halved until the failing record stands alone (a few applies, not
        one per record, so a poison in a catch-up batch of thousands costs little); that
        record is tried once more, then dead-lettered (when the runner has a sink: a rebuild
        has none, the live projection dead-lettered it already) and skipped."""
        total = ApplyStats()
        # a stack of chunks, the next one to apply on top: halving keeps the log order
        chunks: list[Sequence[LogRecord]] = [records] if records else []
        while chunks:
            chunk = chunks.pop()
            outcome = await self._try(chunk)
            if isinstance(outcome, Exception) and len(chunk) == 1:
                await asyncio.sleep(self.retry_pause)  # once more, alone, before giving up on it
                outcome = await self._try(chunk)
                if isinstance(outcome, Exception):
                    await self._step_over(chunk[0], outcome)
                    total.records += 1
                    total.rejected += 1
                    continue
            if isinstance(outcome, Exception):
                if len(chunk) == len(records):
                    log.warning(
                        "projection %s: a batch of %d failed (%s); isolating the record",
                        self.projection.name,
                        len(records),
                        describe(outcome),
                    )
                mid = len(chunk) // 2
                chunks.extend((chunk[mid:], chunk[:mid]))
                continue
            total.add(outcome)
        self.stats.add(total)
        return total

    async def _step_over(self, record: LogRecord, error: Exception) -> None:
        reason = describe(error)
        log.error(
            "projection %s cannot apply %s[%d]@%d: %s; dead-lettered, going on",
            self.projection.name,
            record.topic,
            record.partition,
            record.offset,
            reason,
        )
        # the dead letter is durable before the position moves past its record
        if self.dead_letter is not None:
            await self.dead_letter(reason, record)
        await self.run_in_store(self.projection.skip, record, reason)
        self.health.dead_lettered += 1

    def failed(self, error: BaseException) -> None:
        """The owner's loop caught ``error``: remember it for /health."""
        self.health.last_error = describe(error)[:500]
        if self.health.failing_since is None:
            self.health.failing_since = time.time()

    async def run(self, stop: asyncio.Event, idle: float = 0.2) -> None:
        """Apply records as they arrive until ``stop`` is set."""
        consumer = await self._consumer()
        holding = False  # the projection may buffer applied records (the archive)
        applied_at = float("-inf")  # time.monotonic() at the end of the last batch
        took = 0.0  # seconds the last batch took to apply
        try:
            while not stop.is_set():
                fetched_in = self._generation  # before the fetch: a rebalance during it counts
                batch = await consumer.getmany(
                    timeout_ms=int(idle * 1000), max_records=self.max_records
                )
                if batch:
                    batch = await self._gather_telemetry(consumer, batch, stop)
                    batch = await self._linger(consumer, batch, applied_at, stop, took)
                if batch:
                    started = time.monotonic()
                    async with self._applying:
                        # A rebalance since the fetch seeked each partition it assigned to
                        # the position the store recorded: what this batch holds comes
                        # again from there, and applied now it would be applied twice.
                        if self._generation != fetched_in:
                            await self._refetch(consumer, batch)
                            continue
                        await self._apply(batch)
                    applied_at = time.monotonic()
                    took = applied_at - started
                    holding = True
                else:
                    self.health.failing_since = None  # reading again, nothing left to apply
                    if self.group is None or consumer.assignment():
                        self.caught_up.set()
                    if holding:
                        holding = bool(await self.run_in_store(self.projection.idle))
        finally:
            await consumer.stop()

    async def _refetch(
        self, consumer: AIOKafkaConsumer, batch: dict[TopicPartition, list[Any]]
    ) -> None:
        """After a rebalance, the partitions of a batch not applied are read again from
        its first record, or from the position the store recorded if that is further on
        (what a previous owner applied): records fetched after the rebalance's seek are
        not lost with the batch."""
        positions: dict[tuple[str, int], int] = await self.run_in_store(self.projection.positions)  # type: ignore[assignment]
        held = consumer.assignment()
        for tp, records in batch.items():
            if tp in held and records:
                first = min(r.offset for r in records)
                consumer.seek(tp, max(first, positions.get((tp.topic, tp.partition), 0)))

    def _still_held(
        self, consumer: AIOKafkaConsumer, batch: dict[TopicPartition, list[Any]]
    ) -> dict[TopicPartition, list[Any]]:
        """``batch`` without partitions a rebalance handed to another reader while it waited
        (a shared reader only)."""
        if self.group is None:
            return batch
        held = consumer.assignment()
        return {tp: records for tp, records in batch.items() if tp in held}

    async def _gather_telemetry(
        self,
        consumer: AIOKafkaConsumer,
        batch: dict[TopicPartition, list[Any]],
        stop: asyncio.Event,
    ) -> dict[TopicPartition, list[Any]]:
        """A batch of telemetry alone (``self.telemetry``: what each recall leaves behind,
        its access event and its workflow record) and what arrives within
        ``telemetry_wait`` seconds; anything else arriving ends the wait at once.

        Every recall over HTTP was followed by one or two small DuckDB transactions of its
        telemetry, applied beside the next recall, and a transaction costs far more than
        its rows: gathered, they stop competing with the recalls for the CPU. Nothing a
        caller reads back waits: memories, their states and edges are on the memory log,
        which never waits here; access counts and workflow rows are up to this much late."""
        if self.telemetry_wait <= 0:
            return batch
        count = sum(map(len, batch.values()))
        deadline = time.monotonic() + self.telemetry_wait
        while (
            all(tp.topic in self.telemetry for tp in batch)
            and count < min(self.max_records, LINGER_ENOUGH)
            and (left := deadline - time.monotonic()) > 0
            and not stop.is_set()
        ):
            more = await consumer.getmany(
                timeout_ms=max(1, int(left * 1000)), max_records=self.max_records - count
            )
            for tp, records in more.items():
                batch.setdefault(tp, []).extend(records)
                count += len(records)
        return self._still_held(consumer, batch)

    async def _linger(
        self,
        consumer: AIOKafkaConsumer,
        batch: dict[TopicPartition, list[Any]],
        applied_at: float,
        stop: asyncio.Event,
        took: float = 0.0,
    ) -> dict[TopicPartition, list[Any]]:
        """``batch`` and what arrives until ``linger`` seconds after the last batch ended.

        Much of a batch's cost is per batch, not per record (a DuckDB transaction and its
        lookups, one Qdrant upsert per memory however many events touched it), so while the
        log streams fewer, larger batches leave the worker's CPU to the write path. A record
        after a quiet spell is applied at once. A projection that is busy keeping up (its last
        batch ``took`` the linger or longer) or holds ``LINGER_ENOUGH`` records never waits:
        pausing it would let the write path outrun it, its lag growing with the stream."""
        count = sum(map(len, batch.values()))
        wait = self.linger - (time.monotonic() - applied_at)
        if wait <= 0 or took >= self.linger or count >= min(self.max_records, LINGER_ENOUGH):
            return batch
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), wait)
        more = await consumer.getmany(timeout_ms=0, max_records=self.max_records - count)
        for tp, records in more.items():
            batch.setdefault(tp, []).extend(records)
        return self._still_held(consumer, batch)

    async def catch_up(self, idle: float = 0.5, timeout: float = 30.0) -> ApplyStats:
        """Apply everything up to the end of the log, then return.

        The end is reached when every partition got to its reported end offset *and* a
        poll of ``idle`` seconds brings nothing more (the embedded broker under-reports
        end offsets of batched writes, so the offsets alone are only a lower bound).
        """
        consumer = await self._consumer()
        try:
            tps = list(consumer.assignment())
            ends = await consumer.end_offsets(tps) if tps else {}
            behind = {tp for tp in tps if await consumer.position(tp) < ends[tp]}
            while True:
                batch = await consumer.getmany(
                    timeout_ms=int((timeout if behind else idle) * 1000),
                    max_records=self.max_records,
                )
                if not batch:
                    if behind:
                        raise TimeoutError(
                            f"{self.projection.name}: no records for {timeout:.0f}s while behind"
                        )
                    break
                for tp, records in batch.items():
                    if records and records[-1].offset + 1 >= ends.get(tp, 0):
                        behind.discard(tp)
                await self._apply(batch)
        finally:
            await consumer.stop()
        return self.stats

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.executor.submit(self.projection.close).result(10)
        self.executor.shutdown(wait=True)
