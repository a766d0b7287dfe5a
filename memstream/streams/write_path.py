"""The write-path agent: scan every turn, buffer per session, extract, dedup, gate, emit.

The shell around the pure core (``core.signals``, ``core.buffer_policy``,
``core.write_plan``). Turns arrive in batches (``take_events``); a turn that goes into a
session buffer is held un-acknowledged (an extra reference on its message) until its
buffer is extracted and the resulting events are acknowledged by the broker. So the
committed offset never passes a turn whose memory events are not durable: at-least-once
without faust tables, and the memory log stays the single source of truth.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import faust
from faust.exceptions import ConsumerNotStarted

from memstream.core.buffer_policy import (
    BufferConfig,
    due_on_clock,
    flush_order,
    quiet,
    trigger_on_append,
)
from memstream.core.event_time import event_time_error
from memstream.core.extract.images import caption_of
from memstream.core.gate import GateConfig
from memstream.core.seen_turns import Seen
from memstream.core.signals import scan
from memstream.core.write_plan import BufferedTurn, plan_flush
from memstream.infra.settings import Settings
from memstream.schemas._fields import utc_now
from memstream.schemas.envelope import Envelope, encode, record_headers
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import ConversationTurn
from memstream.streams.commits import held
from memstream.streams.extraction import Extractor, extract_buffer, flush_of
from memstream.streams.intake import dead_letter_record, intake_time
from memstream.streams.partition_state import PartitionState, PartitionStates, SessionBuffer
from memstream.streams.sinks import Sink

if TYPE_CHECKING:
    from memstream.streams.maintenance import Maintenance

log = logging.getLogger("memstream.write_path")

AGENT = "write-path"


@dataclass
class Job:
    state: PartitionState
    key: tuple[str, str | None]
    buffer: SessionBuffer
    trigger: str


def records_waiting(
    read_to: Mapping[Any, int], partition: int, highwater: Callable[[Any], int | None]
) -> bool:
    """Whether a topic partition of ``partition`` has records past the last one read
    (``read_to``: topic partition -> offset; ``highwater``: the log's next offset, None when
    not known)."""
    for tp, offset in read_to.items():
        if tp.partition == partition and (high := highwater(tp)) is not None and offset + 1 < high:
            return True
    return False


@dataclass
class WritePathStats:
    turns: int = 0
    duplicates: int = 0
    dead_lettered: int = 0
    # turns refused as already extracted by their session's floor, not by id (dead-lettered)
    beyond_window: int = 0
    flushes: int = 0
    memory_events: int = 0
    llm_calls: int = 0


class WritePath:
    def __init__(
        self,
        app: faust.App,
        topics: Any,
        settings: Settings,
        states: PartitionStates,
        extractor: Extractor,
        buffer_config: BufferConfig,
        gate_config: GateConfig,
        sink: Sink,
    ) -> None:
        self.app = app
        self.sink = sink
        self.settings = settings
        self.states = states
        self.extractor = extractor
        self.buffer_config = buffer_config
        self.gate_config = gate_config
        self.memory_topic = topics["memory_log"].get_topic_name()
        self.dlq_topic = topics["dlq"].get_topic_name()
        self.stats = WritePathStats()
        # the offset of the last input record read, per topic partition: the idle rule
        # waits while records past it are on the log (the worker is behind, not the tenant)
        self.read_to: dict[Any, int] = {}
        self.maintenance: Maintenance | None = None  # set by register_agents

    # --- agent -----------------------------------------------------------------------

    async def process_batch(self, events: list[Any]) -> None:
        # the whole batch held until it completes: a stop half-way leaves the rest unread
        with held([event.message for event in events], self.app.consumer):
            await self._process(events)

    async def _process(self, events: list[Any]) -> None:
        pending: list[Awaitable[Any]] = []
        jobs: list[Job] = []
        flushed: list[Job] = []
        for event in events:
            message = event.message
            self.read_to[message.tp] = max(self.read_to.get(message.tp, -1), message.offset)
            try:
                env = _decode_turn(message.value, self.settings)
            except EventValidationError as e:
                pending.append(await self._dead_letter(message, e))
                continue
            state = await self.states.get(message.partition)
            late = event_time_error(
                env.occurred_at,
                intake=intake_time(message),
                skew=self.settings.max_future_skew,
                watermark=state.watermarks.get(env.namespace),
            )
            if late is not None:  # before the buffer and the dream-cycle schedule see it
                log.warning("write path dead-letters turn %s: %s", env.event_id, late)
                pending.append(await self._dead_letter(message, late))
                continue
            beyond = self._beyond_window(state, env)
            if beyond is not None:
                pending.append(await self._dead_letter(message, beyond))
                continue
            if self.maintenance is not None:
                boundary = self.maintenance.due(state, env.namespace, env.occurred_at)
                if boundary is not None:
                    # The cycle sees everything said before its boundary: extract this
                    # namespace's buffered turns first, then consolidate.
                    ready = [*jobs, *self._drain(state, env.namespace)]
                    jobs = []
                    if ready:
                        pending.extend(await self._flush(ready))
                        flushed.extend(ready)
                    await self.maintenance.run(state, env.namespace, boundary)
                await self.maintenance.evolve_if_due(state, env.namespace, env.occurred_at)
            jobs.extend(self._accept(state, env, message))
        if jobs:
            pending.extend(await self._flush(jobs))
        await self._settle(pending, [*flushed, *jobs])

    def _beyond_window(
        self, state: PartitionState, env: Envelope[ConversationTurn]
    ) -> EventValidationError | None:
        """A turn that left the dedup window may be a copy of an extracted one: refused, with
        its reason on the DLQ (core/seen_turns.py), never extracted twice nor dropped unseen."""
        ns, session, turn_id = env.namespace, env.session_id, env.payload.turn_id
        seen = state.seen_turns.verdict(ns, session, turn_id, env.occurred_at)
        if seen is not Seen.BEYOND_WINDOW or state.buffered(ns, session, turn_id):
            return None
        self.stats.beyond_window += 1
        floor = state.seen_turns.floor(ns, session)
        log.warning(
            "write path dead-letters turn %s of %s/%s: older than its session's dedup window",
            turn_id,
            ns,
            session,
        )
        return EventValidationError(
            Seen.BEYOND_WINDOW.value,
            f"turn {turn_id!r} is dated {env.occurred_at.isoformat()}, at or before "
            f"{floor.isoformat() if floor else '?'}, the latest extraction of session "
            f"{session!r} that left the dedup window: it may be a copy of a turn already "
            "extracted, so it is not extracted again (send it in a new session to store it)",
            "occurred_at",
        )

    def _drain(self, state: PartitionState, namespace: str) -> list[Job]:
        keys = [(k, state.buffers[k].first_at) for k in state.open_in(namespace)]
        return [Job(state, key, state.cut(key), "cycle") for key in flush_order(keys)]

    def _accept(
        self, state: PartitionState, env: Envelope[ConversationTurn], message: Any
    ) -> list[Job]:
        """Buffer one turn; the jobs it makes due, in order: the namespace's other buffers
        its event time leaves behind, then its own buffer if that is complete."""
        turn = env.payload
        ns, session = env.namespace, env.session_id
        if state.seen_turns.seen(ns, turn.turn_id) or state.buffered(ns, session, turn.turn_id):
            self.stats.duplicates += 1  # a re-delivered or re-published turn: already handled
            return []
        self.stats.turns += 1
        state.last_input[ns] = asyncio.get_running_loop().time()
        key = (ns, session)
        jobs: list[Job] = []
        before = state.watermark(ns)
        state.advance(ns, env.occurred_at)
        watermark = state.watermark(ns)
        if watermark > before:  # the clock moved: other sessions may be left behind
            stale: dict[tuple[str, str | None], str] = {}
            for other in state.open_in(ns):
                buf = state.buffers[other]
                due = due_on_clock(
                    first_at=buf.first_at,
                    last_at=buf.last_at,
                    watermark=watermark,
                    config=self.buffer_config,
                )
                if other != key and due is not None:
                    stale[other] = due
            for other in flush_order((k, state.buffers[k].first_at) for k in stale):
                jobs.append(Job(state, other, state.cut(other), stale[other]))
        signal = scan(turn.text, role=turn.role)
        buffer = state.buffer(key)
        buffer.turns.append(
            BufferedTurn(
                env.event_id,
                turn.turn_id,
                turn.role,
                turn.speaker,
                turn.text,
                env.occurred_at,
                signal,
                caption_of(turn.metadata, turn.text),
                dict(turn.metadata) or None,
            )
        )
        message.incref()  # held until the buffer's events are durable
        buffer.messages.append(message)
        trigger = trigger_on_append(
            level=signal.level.value,
            size=len(buffer.turns),
            first_at=buffer.first_at,
            last_at=buffer.last_at,
            config=self.buffer_config,
            reasons=signal.reasons,
        )
        if trigger is not None:
            jobs.append(Job(state, key, state.cut(key), trigger))
        return jobs

    # --- timer -----------------------------------------------------------------------

    async def flush_due(self) -> None:
        if self.app.producer is None or not self.app.producer.started:
            return  # starting or stopping: the held turns are re-read after a restart anyway
        now = asyncio.get_running_loop().time()
        jobs: list[Job] = []
        for state in self.states.loaded():
            if self._behind(state.partition):
                continue  # its tenants' next turns may be waiting on the log: not quiet
            # Only whole namespaces that went quiet: while a namespace talks, its clock
            # decides (in _accept), so a wall-clock moment never splits its stream.
            for ns in sorted(state.open_keys):
                if quiet(idle_for=now - state.last_input.get(ns, 0.0), config=self.buffer_config):
                    keys = [(k, state.buffers[k].first_at) for k in state.open_in(ns)]
                    jobs.extend(Job(state, k, state.cut(k), "idle") for k in flush_order(keys))
        if jobs:
            await self._settle(await self._flush(jobs), jobs)

    def _behind(self, partition: int) -> bool:
        """Whether input records of ``partition`` wait past the last one read: a slow or
        busy worker must not take a tenant whose turns are queued for a quiet one (the idle
        rule is for liveness; its flushes would depend on the worker's speed)."""
        return records_waiting(self.read_to, partition, self._highwater)

    def _highwater(self, tp: Any) -> int | None:
        """The log's next offset of input partition ``tp``, None when this worker cannot say."""
        try:
            return self.app.consumer.highwater(tp)  # type: ignore[no-any-return]
        except (AssertionError, ConsumerNotStarted):  # not assigned now, or stopped
            return None

    # --- flushing ----------------------------------------------------------------------

    async def _flush(self, jobs: list[Job]) -> list[Awaitable[Any]]:
        # Extraction does not depend on memory state: run it for all jobs at once (the LLM
        # extractor bounds its own concurrency); planning then runs in order, per partition.
        results = await asyncio.gather(
            *(extract_buffer(self.extractor, job.buffer.turns, job.key[1]) for job in jobs),
            return_exceptions=True,
        )
        pending: list[Awaitable[Any]] = []
        for job, result in zip(jobs, results, strict=True):
            ns, session = job.key
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result  # cancellation and exits are not the turns' fault
                # An extractor bug must not become a poison pill either: the turns go to the
                # DLQ with the error; the partition state is rebuilt from the log, as after a
                # planning failure (the cut buffer's turns are marked as being extracted).
                log.exception(
                    "extraction failed for %s/%s; dead-lettering %d turns",
                    ns,
                    session,
                    len(job.buffer.turns),
                    exc_info=result,
                )
                self.states.drop({job.state.partition})
                for message in job.buffer.messages:
                    pending.append(await self._dead_letter(message, result))
                continue
            flush = flush_of(
                result,
                namespace=ns,
                session_id=session,
                trigger=job.trigger,
                turns=job.buffer.turns,
                producer=AGENT,
            )
            async with job.state.lock:
                try:
                    events = plan_flush(
                        job.state.memory(ns),
                        flush,
                        self.gate_config,
                        self.settings.limits,
                        utc_now(),
                    )
                except Exception as e:
                    # A bug must not become a poison pill: the turns go to the DLQ with the
                    # error, and the partition state (maybe half-advanced) is rebuilt from the log.
                    log.exception(
                        "planning failed for %s/%s; dead-lettering %d turns",
                        ns,
                        session,
                        len(flush.turns),
                    )
                    self.states.drop({job.state.partition})
                    for message in job.buffer.messages:
                        pending.append(await self._dead_letter(message, e))
                    continue
                job.state.apply(events[0])  # the TurnsExtracted record; the plan applied the rest
                job.state.events_applied += len(events) - 1  # counted as a fold counts them
            self.stats.flushes += 1
            self.stats.memory_events += len(events) - 1
            self.stats.llm_calls += flush.llm_calls
            # The TurnsExtracted record goes last: one partition's records become durable in
            # order, so a crash in the middle of a flush leaves its decisions without it, and
            # the turns are read and extracted again (facts already stored are recognised).
            # Sent first, it would mark the turns extracted while some of their facts are lost.
            for env in [*events[1:], events[0]]:
                pending.append(
                    await self.sink.send(
                        self.memory_topic,
                        env.key,
                        encode(env),
                        partition=job.state.partition,
                        headers=record_headers(env),
                    )
                )
        return pending

    async def _settle(self, pending: list[Awaitable[Any]], jobs: list[Job]) -> None:
        """Wait until the broker has every event, then release the held turns."""
        if pending:
            await asyncio.gather(*pending)  # a failure raises: the worker stops (stop_on_crash)
        for job in jobs:
            for message in job.buffer.messages:
                message.ack(self.app.consumer)

    async def _dead_letter(self, message: Any, error: Exception) -> Awaitable[Any]:
        self.stats.dead_lettered += 1
        key, value, headers = dead_letter_record(message, error, AGENT)
        return await self.sink.send(self.dlq_topic, key, value, headers=headers)


def _decode_turn(raw: Any, settings: Settings) -> Envelope[ConversationTurn]:
    from memstream.schemas.envelope import decode

    if not isinstance(raw, bytes):
        raise EventValidationError("bad_json", "record has no value")
    env = decode(raw, limits=settings.limits)
    if not isinstance(env.payload, ConversationTurn):
        raise EventValidationError(
            "wrong_topic", f"{env.type} does not belong on the turns topic", "type"
        )
    return env
