"""Agent registration: every input topic gets an agent that reads through the validation gate.

Handlers are the thin shell around the pure core: they receive a decoded envelope and
may emit events. An exception in a handler never kills the agent: the record goes to
the dead-letter topic as ``agent_error`` with its original bytes.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from datetime import timedelta
from typing import Any

import faust

from memstream.consumers.auth import TOKEN_HEADER, bus_denial, header, parse_keys
from memstream.core.buffer_policy import BufferConfig
from memstream.core.event_time import event_time_error
from memstream.core.gate import GateConfig
from memstream.core.recall_filters import RecallFilters
from memstream.core.recall_filters import parse as parse_filters
from memstream.core.roles import API_AGENTS, WRITE_AGENTS
from memstream.infra.kafka_auth import client_options
from memstream.infra.log_identity import recorded_epoch
from memstream.infra.settings import Settings
from memstream.projections.factory import gate_embedder
from memstream.schemas.envelope import Envelope, encode, make_event, record_headers
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import RecallAnswered, RecallHit, RecallRequested
from memstream.schemas.ids import derived_id
from memstream.schemas.topics import BY_ROLE
from memstream.streams.emit import Sent
from memstream.streams.extraction import Extractor, make_extractor
from memstream.streams.intake import DeadLetters, IntakeStats, decoded, intake_time
from memstream.streams.learning import Learning
from memstream.streams.maintenance import Maintenance
from memstream.streams.partition_state import (
    PartitionState,
    PartitionStates,
    SnapshotStore,
    load_partition,
)
from memstream.streams.sinks import ProducerSink, Sink
from memstream.streams.write_path import WritePath

log = logging.getLogger("memstream.agents")


def stop_tolerant(app: Any, tick: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    """A timer body that never crashes a stopping worker: skipped while the producer is not
    running, and an error raised because it stopped during the tick (NotReady) is logged,
    not raised (a timer's exception would end the worker with exit status 1)."""

    async def run() -> None:
        if app.producer is None or not app.producer.started:
            return
        try:
            await tick()
        except Exception:
            if app.producer is not None and app.producer.started:
                raise
            log.info("%s cut short by shutdown", getattr(tick, "__qualname__", "timer"))

    return run


#: handles one valid input; may return sends in flight (the input stays un-acknowledged
#: until they complete, so a crash before then re-reads it)
Handler = Callable[[Envelope[Any], Any], Awaitable[Sent | None]]

#: the event-time bounds of one valid input (None: within them), see core/event_time.py
TimeCheck = Callable[[Envelope[Any], Any], Awaitable[EventValidationError | None]]


def time_check_for(settings: Settings, states: PartitionStates) -> TimeCheck:
    skew = settings.max_future_skew

    async def check(env: Envelope[Any], message: Any) -> EventValidationError | None:
        state = await states.get(message.partition)
        return event_time_error(
            env.occurred_at,
            intake=intake_time(message),
            skew=skew,
            watermark=state.watermarks.get(env.namespace),
        )

    return check


#: role of the input topic -> name of the agent that reads it
INPUT_AGENTS = {
    "access": "access-tracker",
    "feedback": "q-learner",
    "workflows": "workflow-observer",
    "recall_requests": "recall-responder",
}


async def _accept(env: Envelope[Any], event: Any) -> None:
    """Default handler: the record is valid and stays on the log for the projections."""
    return None


def register_agent(
    app: faust.App,
    topics: Any,
    settings: Settings,
    role: str,
    name: str,
    handler: Handler,
    stats: IntakeStats,
    sink: Sink,
    time_check: TimeCheck | None = None,
) -> Any:
    dlq = DeadLetters(sink, topics["dlq"].get_topic_name(), name)
    expected = frozenset(BY_ROLE[role].event_types)
    limits = settings.limits

    settling: set[asyncio.Future[None]] = set()

    async def settle(message: Any, env: Envelope[Any], pending: Sent) -> None:
        try:
            await asyncio.gather(*pending)
        except EventValidationError as e:  # decided later: e.g. feedback whose recall never came
            log.warning("%s dead-letters %s %s: %s", name, env.type, env.event_id, e)
            await dlq.send(message, e)
        except Exception as e:  # the decisions did not all reach the log: as a failed handler
            log.exception("%s could not write the decisions of %s", name, env.event_id)
            await dlq.send(message, e)
        message.ack(app.consumer)

    async def agent(stream: Any) -> None:
        async for event, env in decoded(stream, dlq, limits, stats, expected):
            if time_check is not None and (late := await time_check(env, event.message)):
                # before any rule runs on it: a date in 9999 must not start a dream cycle
                log.warning("%s dead-letters %s %s: %s", name, env.type, env.event_id, late)
                await dlq.send(event.message, late)
                stats.dead_lettered += 1
                continue
            try:
                pending = await handler(env, event)
            except EventValidationError as e:  # a bad reference (an unknown memory): its reason
                log.warning("%s dead-letters %s %s: %s", name, env.type, env.event_id, e)
                await dlq.send(event.message, e)
                continue
            except Exception as e:
                log.exception("%s failed on %s %s; dead-lettering it", name, env.type, env.event_id)
                await dlq.send(event.message, e)
                continue
            if pending:
                # Held, not awaited: the next input is read while the broker acknowledges
                # these; the offset is committed only past inputs whose decisions are durable.
                event.message.incref()
                task = asyncio.ensure_future(settle(event.message, env, pending))
                settling.add(task)
                task.add_done_callback(settling.discard)

    agent.__name__ = name.replace("-", "_")
    # concurrency=1: one task per partition keeps a tenant's events in order.
    return app.agent(topics[role], name=name, concurrency=1)(agent)


def recall_responder(
    handles: dict[str, Any], sink: Sink, reply_topic: str, settings: Settings
) -> Handler:
    """RecallRequested -> RecallAnswered on the reply topic, keyed by the caller's correlation id.

    With API keys configured, a request needs a key for its namespace in the
    ``memstream-token`` header; without one the answer is an error and no results."""
    keys = parse_keys(settings.api_keys)

    async def respond(env: Envelope[Any], event: Any) -> None:
        req: RecallRequested = env.payload
        provider = handles.get("recall")
        service = provider() if provider else None
        denied = bus_denial(keys, header(event.message.headers, TOKEN_HEADER), env.namespace)
        filters: RecallFilters | None = None
        bad_filter: str | None = None
        try:
            filters = parse_filters(req.filters)
        except EventValidationError as e:  # answered, never dropped: the caller waits for it
            bad_filter = str(e)
        if denied is None and bad_filter is not None:
            answer = RecallAnswered(query_id=req.query_id, confidence="skipped", error=bad_filter)
        elif denied is not None:
            log.warning(
                "recall-responder refuses %s for %s: %s", env.event_id, env.namespace, denied
            )
            answer = RecallAnswered(query_id=req.query_id, confidence="skipped", error=denied)
        elif service is None:
            answer = RecallAnswered(
                query_id=req.query_id,
                confidence="skipped",
                error="this worker has no retrieval projection",
            )
        else:
            answer = await _answered(service, env, filters)
        correlation = env.correlation_id or req.query_id
        reply = make_event(
            answer,
            namespace=env.namespace,
            session_id=env.session_id,
            causation_id=env.event_id,
            correlation_id=correlation,
            occurred_at=env.occurred_at,
            producer="recall-responder",
            event_id=derived_id(env.occurred_at, "reply", env.event_id),
            limits=settings.limits,
        )
        await (
            await sink.send(
                reply_topic, correlation.encode(), encode(reply), headers=record_headers(reply)
            )
        )

    return respond


def extractor_for(settings: Settings) -> Extractor:
    """The LLM extractor when a key (or an OpenAI-compatible base URL) is configured, else rules."""
    api_key = settings.openai_api_key or os.environ.get("OPENAI_API_KEY")
    if not (api_key or settings.openai_base_url):
        return make_extractor("rules")
    from memstream.streams.llm_extractor import LLMSettings

    return make_extractor(
        "llm",
        LLMSettings(
            model=settings.openai_model,
            base_url=settings.openai_base_url,
            api_key=api_key,
            timeout_s=settings.openai_timeout_s,
            max_retries=settings.openai_max_retries,
            backoff_base_s=settings.openai_backoff_s,
            max_concurrency=settings.openai_max_concurrency,
        ),
    )


def register_write_path(
    app: faust.App, topics: Any, settings: Settings, states: PartitionStates, sink: Sink
) -> WritePath:
    write_path = WritePath(
        app,
        topics,
        settings,
        states,
        extractor_for(settings),
        BufferConfig(
            max_turns=settings.buffer_max_turns,
            max_age=timedelta(minutes=settings.buffer_max_age_minutes),
            gap=timedelta(minutes=settings.buffer_gap_minutes),
            idle_seconds=settings.buffer_idle_seconds,
        ),
        GateConfig(
            create_below=settings.gate_create_below,
            update_min=settings.gate_update_min,
            reinforce_above=settings.gate_reinforce_above,
        ),
        sink,
    )

    async def write_path_agent(stream: Any) -> None:
        # Batches amortise faust's per-event cost; acks happen when a batch returns.
        async for events in stream.take_events(500, within=0.05):
            await write_path.process_batch(list(events))

    app.agent(topics["turns"], name="write-path", concurrency=1)(write_path_agent)

    # stopping mid-flush: the held turns were not acknowledged and are re-read
    app.timer(1.0, name="write-path-flush-due")(stop_tolerant(app, write_path.flush_due))
    return write_path


class SnapshotRefresh:
    """Keeps each held partition's snapshot near the log's end: past ``every`` events since
    the last one, the partition is folded again from that snapshot to the log's current end
    (a separate state, from the log itself: the live state may hold events not yet written)
    and the result saved. The live state is not touched."""

    def __init__(self, states: PartitionStates, load: Any, every: int) -> None:
        self.states, self.load, self.every = states, load, every
        # partition -> (the state object, its events_applied at its last snapshot); a state
        # loaded again (a rebalance) starts from its own load
        self.at: dict[int, tuple[int, int]] = {}
        self.taken = 0

    async def tick(self) -> None:
        for state in self.states.loaded():
            mine, base = self.at.get(state.partition, (id(state), state.loaded_events))
            if mine != id(state):
                base = state.loaded_events
            if state.events_applied - base >= self.every:
                self.at[state.partition] = (id(state), state.events_applied)
                await self.load(state.partition, follow=False)
                self.taken += 1


def register_agents(
    app: faust.App,
    topics: Any,
    settings: Settings,
    sink: Sink | None = None,
    state_loader: Callable[[int], Awaitable[PartitionState]] | None = None,
    agents: Iterable[str] | None = None,
) -> dict[str, Any]:
    """``agents``: the names to run (core/roles.py); None: every one."""
    sink = sink or ProducerSink(app)
    wanted = set(WRITE_AGENTS + API_AGENTS if agents is None else agents)
    if not wanted & set(WRITE_AGENTS):
        return register_api_agents(app, topics, settings, sink) if wanted else {}
    memory_log = topics["memory_log"].get_topic_name()
    embedder = gate_embedder(settings)

    snapshots = (
        SnapshotStore(
            settings.data_dir,
            memory_log,
            lambda: recorded_epoch(settings.data_dir, settings.topic_prefix),
            embedder,
        )
        if settings.snapshots
        else None
    )

    async def load(partition: int, *, follow: bool = True) -> Any:
        return await load_partition(
            settings.bootstrap(),
            memory_log,
            partition,
            embedder,
            settings.limits,
            access_topic=topics["access"].get_topic_name(),
            auth=client_options(settings),
            snapshots=snapshots,
            follow=follow,
            # the refresh always writes one; a load only past a quarter of its period
            resnapshot_after=0 if not follow else settings.snapshot_every_events // 4,
        )

    states = PartitionStates(state_loader or load)

    async def revoked(sender: Any, revoked: set[Any], **_kw: Any) -> None:
        states.drop({tp.partition for tp in revoked})

    app.on_partitions_revoked.connect(revoked)  # type: ignore[arg-type]

    async def assigned(sender: Any, assigned: set[Any], **_kw: Any) -> None:
        states.prefetch(
            {tp.partition for tp in assigned if tp.topic == topics["turns"].get_topic_name()}
        )

    app.on_partitions_assigned.connect(assigned)  # type: ignore[arg-type]
    handles: dict[str, Any] = {
        "states": states,
        "write_path": register_write_path(app, topics, settings, states, sink),
    }
    learning = Learning(settings, states, sink, memory_log)
    handles["learning"] = learning
    maintenance = Maintenance(
        settings, states, learning, sink, memory_log, topics["workflows"].get_topic_name()
    )
    handles["maintenance"] = maintenance
    handles["write_path"].maintenance = maintenance

    def scheduled(handler: Handler) -> Handler:
        async def run(env: Any, event: Any) -> Sent | None:
            state = await states.get(event.message.partition)
            await maintenance.before(state, env.namespace, env.occurred_at)
            return await handler(env, event)

        return run

    handlers: dict[str, Handler] = {
        "access": scheduled(learning.on_access),
        "feedback": scheduled(learning.on_feedback),
        "recall_requests": recall_responder(
            handles, sink, topics["recall_replies"].get_topic_name(), settings
        ),
    }

    # a tick cut short: the tier check is redone from the log by the next worker
    app.timer(5.0, name="maintenance")(stop_tolerant(app, maintenance.tick))
    if snapshots is not None and state_loader is None:
        refresh = SnapshotRefresh(states, load, settings.snapshot_every_events)
        handles["snapshots"] = refresh
        app.timer(5.0, name="snapshots")(stop_tolerant(app, refresh.tick))  # a cheap check
    app.timer(1.0, name="feedback-expiry")(learning.expire_parked)
    for role, name in INPUT_AGENTS.items():
        if name not in wanted:
            continue
        handles[name] = IntakeStats()
        register_agent(
            app,
            topics,
            settings,
            role,
            name,
            handlers.get(role, _accept),
            handles[name],
            sink,
            time_check_for(settings, states),
        )
    return handles


def register_api_agents(
    app: faust.App, topics: Any, settings: Settings, sink: Sink
) -> dict[str, Any]:
    """An API node's agents: the bus recall responder alone. It holds no partition state, so
    the event-time check has no namespace watermark (the clock at intake bounds it)."""
    skew = settings.max_future_skew

    async def check(env: Envelope[Any], message: Any) -> EventValidationError | None:
        return event_time_error(env.occurred_at, intake=intake_time(message), skew=skew)

    handles: dict[str, Any] = {"recall-responder": IntakeStats()}
    register_agent(
        app,
        topics,
        settings,
        "recall_requests",
        "recall-responder",
        recall_responder(handles, sink, topics["recall_replies"].get_topic_name(), settings),
        handles["recall-responder"],
        sink,
        check,
    )
    return handles


async def _answered(
    service: Any, env: Envelope[Any], filters: RecallFilters | None
) -> RecallAnswered:
    """The recall's answer; a filter the namespace cannot satisfy (a tree node it does not
    have) is an error in the answer, never a dropped request."""
    req: RecallRequested = env.payload
    try:
        result = await service.recall(
            env.namespace,
            req.query,
            k=req.k,
            as_of=req.as_of,
            include_superseded=req.include_superseded,
            include_archived=req.include_archived,
            include_low_confidence=req.include_low_confidence,
            session_id=env.session_id,
            query_id=req.query_id,
            wait=True,  # the topic is the queue: wait for a slot, never refuse
            filters=filters,
            now=req.at,
        )
        return RecallAnswered(
            query_id=req.query_id,
            confidence=result.confidence,  # type: ignore[arg-type]
            results=[
                RecallHit(
                    memory_id=r.memory_id,
                    text=r.text,
                    score=r.score,
                    explain=r.explain,
                    source_turn_ids=r.source_turn_ids,
                )
                for r in result.results
            ],
        )
    except EventValidationError as e:
        return RecallAnswered(query_id=req.query_id, confidence="skipped", error=str(e))
