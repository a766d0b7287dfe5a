"""The faust application: one per worker process, built from settings (never a module global,
so tests and benchmarks can build as many as they need)."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any

import faust

from memstream.infra.kafka_auth import faust_credentials
from memstream.infra.settings import Settings
from memstream.infra.topics import topic_names
from memstream.streams import commits
from memstream.streams.partition_state import PartitionState
from memstream.streams.sinks import Sink

log = logging.getLogger("memstream.agents")


@dataclass
class Topics:
    """The faust topic objects of one app, by role (raw bytes: agents decode themselves)."""

    by_role: dict[str, Any]

    def __getitem__(self, role: str) -> Any:
        return self.by_role[role]


def app_id(settings: Settings, group: str = "worker") -> str:
    """The agents' consumer group: ``<prefix>-worker`` for write (and all-in-one) nodes,
    ``<prefix>-api`` for API nodes without a write role (core/roles.py)."""
    return f"{settings.topic_prefix}-{group}"


def stop_on_crash(app: faust.App) -> Callable[[Any, BaseException], Coroutine[Any, Any, None]]:
    """What an agent does with an exception that escapes it (a bad record never does: it is
    dead-lettered; a broker write that failed for good, a bug): the worker stops with exit
    status 1. faust would restart only the agent, which reads on after the records it held,
    so nothing is committed past them and they are not read again before the worker
    restarts: its committed offset stalls. Stopping commits what was completed; a restart
    (by hand or the process supervisor: ``restart: unless-stopped`` in infra/compose.yaml)
    reloads the partition state and reads the held records again."""

    async def on_error(agent: Any, exc: BaseException) -> None:
        log.critical(
            "agent %s crashed (%r): stopping the worker, which a restart resumes from the "
            "last committed offsets",
            getattr(agent, "name", agent),
            exc,
        )
        await app.crash(exc)

    return on_error


def create_app(
    settings: Settings,
    *,
    web_port: int | None = None,
    datadir: str | None = None,
    sink: Sink | None = None,
    state_loader: Callable[[int], Awaitable[PartitionState]] | None = None,
    agents: Iterable[str] | None = None,
    group: str = "worker",
) -> tuple[faust.App, Topics]:
    """``sink`` and ``state_loader`` replace Kafka in ``agent.test_context()`` tests;
    ``agents`` and ``group`` come from the node's roles (core/roles.py), None: every agent."""
    brokers = ";".join(f"kafka://{b}" for b in settings.bootstrap().split(","))
    app = faust.App(
        app_id(settings, group),
        broker=brokers,
        store="memory://",
        datadir=datadir or tempfile.mkdtemp(prefix="memstream-worker-"),
        web_enabled=web_port is not None,
        web_port=web_port or 6066,
        web_host="127.0.0.1",
        # Topics come from `memstream topics create`; faust must not invent its own.
        topic_allow_declare=False,
        topic_disable_leader=True,
        topic_partitions=settings.partitions,
        consumer_auto_offset_reset="earliest",
        producer_acks=-1,
        broker_session_timeout=settings.broker_session_timeout,
        broker_heartbeat_interval=settings.broker_heartbeat_interval,
        broker_commit_every=1000,
        broker_commit_interval=1.0,
        # Buffered turns stay un-acked until extracted: a rebalance must not wait for them.
        stream_wait_empty=False,
        broker_credentials=faust_credentials(settings),
    )
    # faust would commit past a turn held in a session buffer (streams/commits.py).
    commits.install(app)
    # every agent's handler of what escapes it (faust's own commits, and the agent restarts)
    app._on_agent_error = stop_on_crash(app)  # type: ignore[method-assign,assignment]
    topics = Topics(
        {
            role: app.topic(
                name,
                key_type=bytes,
                value_type=bytes,
                key_serializer="raw",
                value_serializer="raw",
                internal=False,
            )
            for role, name in topic_names(settings.topic_prefix).items()
        }
    )
    from memstream.streams.agents import register_agents

    app.memstream = register_agents(app, topics, settings, sink, state_loader, agents)  # type: ignore[attr-defined]
    return app, topics
