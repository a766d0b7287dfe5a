"""Per-partition state of a worker, rebuilt by folding the memory log.

The memory log is the only durable state: a partition's state is loaded by reading its
memory-log partition from the start (co-partitioned with the input topics: every
memory event is written to the partition its cause came from) and applying each event
with the same reducer the live path uses. Session buffers are *not* durable: their turns
stay unacknowledged until extracted, so after a crash or rebalance the new owner reads
them again from the committed offset.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition

from memstream.core.embedding import Embedder
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.recent_ids import RecentIds
from memstream.core.scoped_feedback import query_key
from memstream.core.seen_turns import SeenTurns
from memstream.core.tiers import q_high_since
from memstream.core.write_plan import BufferedTurn
from memstream.schemas.envelope import Envelope, Limits, decode
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import (
    ConsolidationReported,
    MemoryAccessed,
    QValueUpdated,
    TurnsExtracted,
)
from memstream.streams.lazy_namespaces import Namespaces
from memstream.streams.snapshots import (
    Snapshot,
    SnapshotKey,
    capture,
    path_for,
    restore,
)
from memstream.streams.snapshots import read as read_snapshot
from memstream.streams.snapshots import write as write_snapshot

log = logging.getLogger("memstream.state")

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ACCESS_HISTORY = 64  # access times kept per memory (tier rules look at recent weeks only)
Q_HISTORY = 20  # learned Q updates kept per memory for evolution's evidence
MAX_RECALLS = 100_000  # recalls remembered per partition for feedback on a query id


@dataclass
class SessionBuffer:
    turns: list[BufferedTurn] = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)  # held (un-acked) faust messages

    @property
    def first_at(self) -> datetime:
        return self.turns[0].occurred_at

    @property
    def last_at(self) -> datetime:
        return max(t.occurred_at for t in self.turns)


@dataclass
class ParkedFeedback:
    """Feedback on a recall whose MemoryAccessed is not here yet (the two travel on different
    topics): it waits here, not in the agent, until the access tracker brings the recall or
    ``since`` (loop time) is too long ago; ``done`` holds the input's acknowledgement."""

    env: Envelope[Any]
    done: asyncio.Future[None]
    since: float


@dataclass
class PartitionState:
    partition: int
    embedder: Embedder
    # unpacked from the snapshot on first use (streams/lazy_namespaces.py)
    namespaces: Namespaces = field(default_factory=Namespaces)
    # Turns extracted: the recent ones by id, older ones by their session's floor (bounded)
    seen_turns: SeenTurns = field(default_factory=SeenTurns)
    buffers: dict[tuple[str, str | None], SessionBuffer] = field(default_factory=dict)
    # The open buffers' keys by namespace (the flush rules are decided per namespace), and
    # the loop time of each namespace's latest turn (the wall-clock idle rule, liveness only).
    open_keys: dict[str, dict[tuple[str, str | None], None]] = field(default_factory=dict)
    last_input: dict[str, float] = field(default_factory=dict)
    # Turns of buffers cut for extraction whose TurnsExtracted is not applied yet: a copy of
    # one that arrives meanwhile (a producer's retry) is a duplicate, not a new turn.
    extracting: set[tuple[str, str]] = field(default_factory=set)
    # Highest event time seen, per namespace: tenants' clocks are independent, so one tenant's
    # late replay must not age another tenant's buffers.
    watermarks: dict[str, datetime] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    events_applied: int = 0
    loaded_events: int = 0  # events_applied when the load finished (the snapshot refresh)
    # Input events whose effects are on the log: every agent-made event names its input as
    # causation, so a re-delivered input is recognised after a restart too. Only the newest
    # are kept: re-deliveries come from the committed offset (core/recent_ids.py).
    processed: RecentIds = field(default_factory=RecentIds)
    # Access statistics folded from the access topic: (namespace, memory_id) -> accesses
    accesses: dict[tuple[str, str], list[datetime]] = field(default_factory=dict)
    recalls: OrderedDict[tuple[str, str], tuple[tuple[str, int], ...]] = field(
        default_factory=OrderedDict
    )
    # the same recalls' questions as content-word keys, for feedback scoped to the question
    # (core/scoped_feedback.py); evicted with ``recalls``
    recall_keys: OrderedDict[tuple[str, str], str] = field(default_factory=OrderedDict)
    # Next offset of the access partition to fold: the access tracker reads the partition
    # the load folded, in the same order, so a record below it was counted already.
    access_next: int = 0
    q_high_since: dict[tuple[str, str], datetime] = field(default_factory=dict)
    # Latest dream cycle per namespace (its ConsolidationReported, or a run that planned
    # nothing): the scheduler runs each event-time boundary once.
    last_cycle: dict[str, datetime] = field(default_factory=dict)
    # Evolution's trigger (core/evolution_apply.py), folded from the log so a restart and a
    # rebuild decide alike: since when (the last evolution's report, else the namespace's
    # first memory event) and how many Q updates learned from use came since.
    evolution_since: dict[str, datetime] = field(default_factory=dict)
    q_updates_since: dict[str, int] = field(default_factory=dict)
    # (namespace, memory_id) -> the newest Q updates learned from use: (time, Q after,
    # reward, outcome), the usage history evolution's evidence carries
    q_history: dict[tuple[str, str], list[tuple[datetime, float, float, str]]] = field(
        default_factory=dict
    )
    # (namespace, query_id) -> feedback waiting for that recall (see ParkedFeedback)
    parked: dict[tuple[str, str], list[ParkedFeedback]] = field(default_factory=dict)
    # memory events of a namespace still packed, in log order: applied when it is unpacked
    deferred: dict[str, list[Envelope[Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.namespaces.bind(self.embedder, self._unpacked)

    def _unpacked(self, namespace: str) -> None:
        for env in self.deferred.pop(namespace, ()):
            self._apply_to_memory(env)

    def unpack_pending(self) -> None:
        """Unpack every namespace with deferred events (they are applied): before a snapshot."""
        for ns in list(self.deferred):
            self.namespaces[ns]

    def memory(self, namespace: str) -> NamespaceMemory:
        mem = self.namespaces.get(namespace)
        if mem is None:
            mem = self.namespaces[namespace] = NamespaceMemory(namespace, self.embedder)
        return mem

    def apply(self, env: Envelope[Any]) -> None:
        self.evolution_since.setdefault(env.namespace, env.occurred_at)
        if isinstance(env.payload, TurnsExtracted):
            ids = [t.turn_id for t in env.payload.turns]
            self.seen_turns.extracted(env.namespace, env.session_id, ids, env.occurred_at)
            self.extracting.difference_update((env.namespace, t) for t in ids)
        elif isinstance(env.payload, ConsolidationReported):
            if env.payload.evidence.get("kind") == "evolution":
                self.evolved(env.namespace, env.occurred_at)
            else:
                self.cycled(env.namespace, env.occurred_at)
        elif self.namespaces.is_packed(env.namespace) and not isinstance(
            env.payload, QValueUpdated
        ):
            # the namespace waits packed: its event too (a Q update unpacks it, for the
            # bookkeeping below that reads the state it leads to)
            self.deferred.setdefault(env.namespace, []).append(env)
        else:
            self._apply_to_memory(env)
        if env.causation_id:
            self.processed.add(env.causation_id)
        self.advance(env.namespace, env.occurred_at)
        self.events_applied += 1

    def _apply_to_memory(self, env: Envelope[Any]) -> None:
        state = self.memory(env.namespace).apply(env)
        if state is None or not isinstance(env.payload, QValueUpdated):
            return
        key = (env.namespace, state.memory_id)
        since = q_high_since(self.q_high_since.get(key), state.q_value, env.occurred_at)
        if since is None:
            self.q_high_since.pop(key, None)
        else:
            self.q_high_since[key] = since
        if env.payload.weight > 0.0:  # learned from use, not the cycle's drift
            ns = env.namespace
            self.q_updates_since[ns] = self.q_updates_since.get(ns, 0) + 1
            history = self.q_history.setdefault(key, [])
            outcome = str(env.payload.evidence.get("outcome") or "")
            history.append((env.occurred_at, env.payload.new_q, env.payload.reward, outcome))
            del history[:-Q_HISTORY]

    def apply_access(self, env: Envelope[Any], offset: int) -> bool:
        """Fold the access partition's record at ``offset``; False if it was already counted
        (or is no MemoryAccessed)."""
        if offset < self.access_next:
            return False
        self.access_next = offset + 1
        if not isinstance(env.payload, MemoryAccessed):
            return False  # other types on the topic were dead-lettered by the access tracker
        p = env.payload
        for m in p.memories:
            times = self.accesses.setdefault((env.namespace, m.memory_id), [])
            times.append(env.occurred_at)
            del times[:-ACCESS_HISTORY]
        self.recalls[(env.namespace, p.query_id)] = tuple((m.memory_id, m.rank) for m in p.memories)
        if p.query:
            self.recall_keys[(env.namespace, p.query_id)] = query_key(p.query)
        while len(self.recalls) > MAX_RECALLS:
            self.recall_keys.pop(self.recalls.popitem(last=False)[0], None)
        self.advance(env.namespace, env.occurred_at)
        return True

    def evolved(self, namespace: str, at: datetime) -> None:
        """An evolution ran at ``at``: its trigger starts over."""
        if at >= self.evolution_since.get(namespace, EPOCH):
            self.evolution_since[namespace] = at
            self.q_updates_since[namespace] = 0

    def cycled(self, namespace: str, at: datetime) -> None:
        if at > self.last_cycle.get(namespace, EPOCH):
            self.last_cycle[namespace] = at

    def watermark(self, namespace: str) -> datetime:
        return self.watermarks.get(namespace, EPOCH)

    def advance(self, namespace: str, at: datetime) -> None:
        if at > self.watermarks.get(namespace, EPOCH):
            self.watermarks[namespace] = at

    def usage(self, namespace: str, memory_id: str) -> tuple[int, datetime | None]:
        times = self.accesses.get((namespace, memory_id), [])
        return len(times), (max(times) if times else None)

    def buffered(self, namespace: str, session_id: str | None, turn_id: str) -> bool:
        """In a session buffer, or in one cut for extraction and not yet on the log."""
        if (namespace, turn_id) in self.extracting:
            return True
        buf = self.buffers.get((namespace, session_id))
        return buf is not None and any(t.turn_id == turn_id for t in buf.turns)

    def buffer(self, key: tuple[str, str | None]) -> SessionBuffer:
        """The session's open buffer (a new one if it has none)."""
        buf = self.buffers.get(key)
        if buf is None:
            buf = self.buffers[key] = SessionBuffer()
            self.open_keys.setdefault(key[0], {})[key] = None
        return buf

    def open_in(self, namespace: str) -> list[tuple[str, str | None]]:
        """Keys of the namespace's open buffers."""
        return list(self.open_keys.get(namespace, ()))

    def cut(self, key: tuple[str, str | None]) -> SessionBuffer:
        """Take a session's buffer out for extraction; later turns start a new one."""
        buffer = self.buffers.pop(key)
        keys = self.open_keys.get(key[0])
        if keys is not None:
            keys.pop(key, None)
            if not keys:
                del self.open_keys[key[0]]
        self.extracting.update((key[0], t.turn_id) for t in buffer.turns)
        return buffer


class LogMismatch(Exception):
    """A snapshot's position is not on this log (past its end, or another record there)."""


@dataclass(frozen=True, slots=True)
class Folded:
    position: int  # next offset to fold
    last_event_id: str | None  # the event at position - 1


async def load_partition(
    bootstrap: str,
    topic: str,
    partition: int,
    embedder: Embedder,
    limits: Limits,
    idle: float = 0.5,
    access_topic: str | None = None,
    auth: Mapping[str, Any] | None = None,
    snapshots: SnapshotStore | None = None,
    follow: bool = True,
    resnapshot_after: int = 5000,
) -> PartitionState:
    """Fold the memory-log partition (and the access partition) into a fresh state: from
    the latest snapshot on, when ``snapshots`` has one made from this log, else from the
    start. ``auth``: the client options of ``infra.kafka_auth.client_options``."""
    started = time.monotonic()
    options = dict(auth or {})
    snapshot = snapshots.load(partition) if snapshots is not None else None
    state = PartitionState(partition, embedder)
    if snapshot is not None:
        restore(state, snapshot.state)
    before = state.events_applied
    try:
        memory, access = await _fold_both(
            bootstrap,
            topic,
            access_topic,
            partition,
            limits,
            idle,
            state,
            snapshot,
            options,
            follow,
        )
    except LogMismatch as e:
        log.warning("partition %d: snapshot ignored (%s); folding from the start", partition, e)
        snapshot, state = None, PartitionState(partition, embedder)
        before = 0
        memory, access = await _fold_both(
            bootstrap, topic, access_topic, partition, limits, idle, state, None, options, follow
        )
    log.info(
        "partition %d loaded%s: %d events folded, %d namespaces, %.2f s",
        partition,
        f" from a snapshot at offset {snapshot.memory_position}" if snapshot else "",
        state.events_applied - before,
        len(state.namespaces),
        time.monotonic() - started,
    )
    state.loaded_events = state.events_applied
    # a new snapshot costs a pickle of the whole state while the partition waits: worth it
    # after a fold from the start, or past ``resnapshot_after`` events of tail (a shorter
    # tail is cheaper to fold again; the refresh keeps the snapshot near the log's end)
    folded = state.events_applied - before
    worth = snapshot is None or folded >= resnapshot_after
    if snapshots is not None and worth and memory.position > 0:
        # the state is exactly the log's fold up to these positions, and no agent holds it
        # yet: a snapshot for the next start
        await snapshots.save(state, memory, access)
    return state


async def _fold_both(
    bootstrap: str,
    topic: str,
    access_topic: str | None,
    partition: int,
    limits: Limits,
    idle: float,
    state: PartitionState,
    snapshot: Snapshot | None,
    options: dict[str, Any],
    follow: bool,
) -> tuple[Folded, Folded]:
    memory = await _fold_partition(
        bootstrap,
        topic,
        partition,
        limits,
        idle,
        lambda env, _offset: state.apply(env),
        follow=follow,
        auth=options,
        start=snapshot.memory_position if snapshot else 0,
        expect=snapshot.state.get("memory_last_event_id") if snapshot else None,
    )
    access = Folded(0, None)
    if access_topic:
        # Up to the end found at the start only: every recall appends to the access topic, so
        # under a steady recall load it is never quiet and following it would hold the write
        # path back for as long as the recalls go on. Later accesses reach the state through
        # the access tracker, which folds each one it reads (repeats are recognised by id).
        access = await _fold_partition(
            bootstrap,
            access_topic,
            partition,
            limits,
            idle,
            state.apply_access,
            follow=False,
            auth=options,
            start=snapshot.access_position if snapshot else 0,
            expect=snapshot.state.get("access_last_event_id") if snapshot else None,
        )
    return memory, access


async def _fold_partition(
    bootstrap: str,
    topic: str,
    partition: int,
    limits: Limits,
    idle: float,
    apply: Callable[[Any, int], Any],
    *,
    follow: bool = True,
    auth: Mapping[str, Any] | None = None,
    start: int = 0,
    expect: str | None = None,
) -> Folded:
    """Apply every record of one partition from ``start``: to the end offset found at the
    start, then (``follow``) on until the log is idle for ``idle`` seconds. Only the
    partition's owner writes to the memory log, so following it ends; other topics may be
    written to by anyone at any rate. From a snapshot (``start`` > 0), the record before
    ``start`` must be the one the snapshot folded last (``expect``), or LogMismatch."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None, **(auth or {})
    )
    await consumer.start()
    last: str | None = expect
    try:
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        if start > 0:
            # the end offset alone cannot say (the embedded broker reports a batched write's
            # end as its first offset + 1): read the snapshot's last record back
            consumer.seek(tp, start - 1)
            found = await consumer.getmany(tp, timeout_ms=5000)
            at = [r for r in found.get(tp, []) if r.offset == start - 1]
            if not at or _event_id(at[0].value) != expect:
                raise LogMismatch(f"{topic}[{partition}]@{start - 1} is not the snapshot's")
            consumer.seek(tp, start)
        else:
            await consumer.seek_to_beginning(tp)
        end = (await consumer.end_offsets([tp]))[tp]
        if end == 0:
            return Folded(
                0, None
            )  # nothing was ever written (a non-empty partition reports at least 1)
        position = start
        while True:
            batch = await consumer.getmany(
                tp, timeout_ms=int((idle if position >= end else 10.0) * 1000)
            )
            records = batch.get(tp, [])
            if not records:
                break
            for record in records:
                if record.offset < position:
                    continue  # a fetch may start at its batch's first record
                position = record.offset + 1
                try:
                    env = decode(record.value, limits=limits)
                except EventValidationError as e:  # agents dead-lettered it already; state skips it
                    log.warning("%s[%d]@%d unreadable: %s", topic, partition, record.offset, e)
                    last = _event_id(record.value)
                    continue
                apply(env, record.offset)
                last = env.event_id
            # A fetch returns whole record batches, so this also covers the embedded broker's
            # end offset for a batched write (reported as the batch's first offset + 1).
            if not follow and position >= end:
                break
        return Folded(position, last)
    finally:
        await consumer.stop()


def _event_id(value: bytes | None) -> str | None:
    """The event id of a raw record (None when it has none), without full validation."""
    try:
        raw = orjson.loads(value or b"")
    except orjson.JSONDecodeError:
        return None
    found = raw.get("event_id") if isinstance(raw, dict) else None
    return found if isinstance(found, str) else None


class SnapshotStore:
    """Where a worker keeps its partitions' snapshots (``streams/snapshots.py``)."""

    def __init__(
        self, data_dir: str, topic: str, epoch: Callable[[], str | None], embedder: Embedder
    ) -> None:
        """``epoch``: the identity of the log this worker follows, read at each load (a
        recovered log has a new one, and every older snapshot is ignored)."""
        self.data_dir, self.topic, self.epoch, self.embedder = data_dir, topic, epoch, embedder

    def key(self, partition: int) -> SnapshotKey:
        return SnapshotKey.of(self.topic, partition, self.epoch(), self.embedder)

    def load(self, partition: int) -> Snapshot | None:
        key = self.key(partition)
        return read_snapshot(path_for(self.data_dir, key), key)

    async def save(self, state: PartitionState, memory: Folded, access: Folded) -> None:
        key = self.key(state.partition)
        body = {
            **capture(state),
            "memory_last_event_id": memory.last_event_id,
            "access_last_event_id": access.last_event_id,
        }
        snapshot = Snapshot(key, memory.position, access.position, body)
        started = time.monotonic()
        try:
            size = await asyncio.to_thread(write_snapshot, path_for(self.data_dir, key), snapshot)
        except OSError as e:  # a cache: the worker goes on without it
            log.warning("partition %d: snapshot not written (%s)", state.partition, e)
            return
        log.info(
            "partition %d: snapshot at offset %d written (%d bytes, %.2f s)",
            state.partition,
            memory.position,
            size,
            time.monotonic() - started,
        )


class PartitionStates:
    """The states of the partitions this worker holds, loaded on first use."""

    def __init__(self, loader: Callable[[int], Any]) -> None:
        self._loader = loader
        self._states: dict[int, PartitionState] = {}
        self._loading: dict[int, asyncio.Task[PartitionState]] = {}

    async def get(self, partition: int) -> PartitionState:
        state = self._states.get(partition)
        if state is not None:
            return state
        task = self._loading.get(partition)
        if task is None:
            task = self._loading[partition] = asyncio.ensure_future(self._loader(partition))
        try:
            state = await task
        finally:
            self._loading.pop(partition, None)
        self._states[partition] = state
        return state

    def prefetch(self, partitions: set[int]) -> None:
        """Start loading newly assigned partitions at once, side by side, not on first use."""
        for p in partitions:
            if p not in self._states and p not in self._loading:
                self._loading[p] = asyncio.ensure_future(self._loader(p))

    def drop(self, partitions: set[int]) -> None:
        """Revoked partitions: forget their state (buffered turns were never acked)."""
        for p in partitions:
            state = self._states.pop(p, None)
            for waiting in state.parked.values() if state else ():
                for parked in waiting:
                    # not acknowledged: the partition's next owner reads the feedback again
                    parked.done.cancel()

    def loaded(self) -> list[PartitionState]:
        return list(self._states.values())
