"""Run a worker process: create the topics, then start the faust worker programmatically.

``app.main()`` never returns and parses sys.argv, so the worker is built by hand. Each
worker needs its own web port and data directory.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import mode
from faust.worker import Worker
from mode import Service

from memstream.consumers.http_api import ApiService
from memstream.core.health import identity_check
from memstream.core.roles import NodePlan, parse_roles, plan
from memstream.infra.blas import limit_blas_threads
from memstream.infra.broker import free_port
from memstream.infra.gc_pauses import fewer_full_collections
from memstream.infra.kafka_auth import client_options
from memstream.infra.log_identity import ensure_identity, record_epoch, recorded_epoch
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.projections.service import ProjectionService
from memstream.streams.app import create_app
from memstream.streams.status import read_status, record_worker, write_status


def _say(line: str) -> None:
    # stdout, unbuffered: a user (or a supervisor) sees where the worker listens and when
    # it is ready without reading worker.json
    print(f"memstream worker: {line}", flush=True)


def _check_log_identity(settings: Settings, loop: asyncio.AbstractEventLoop) -> None:
    """Refuse to run on a log this data directory was not built from: its read positions
    mean nothing there, and carrying on would apply nothing (or the wrong records) quietly."""
    auth = client_options(settings)
    found = loop.run_until_complete(
        ensure_identity(settings.bootstrap(), settings.topic_prefix, auth=auth)
    )
    recorded = recorded_epoch(settings.data_dir, settings.topic_prefix)
    if recorded is None and found:
        record_epoch(settings.data_dir, settings.topic_prefix, found, settings.bootstrap())
    elif recorded != found:
        message = identity_check(recorded, found, settings.bootstrap()).detail
        logging.getLogger("memstream.worker").error("log identity: %s", message)
        print(
            f"memstream worker: refusing to start on {settings.bootstrap()}: {message}",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(3)


class _Ready(Service):
    """The readiness of a node without agents (no rebalance to wait for): written once its
    projections and API started, as a rebalance's end is for the others."""

    def __init__(self, status_dir: Path, announce: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.status_dir, self.announce = status_dir, announce

    async def on_started(self) -> None:
        write_status(self.status_dir, assigned=[], rebalance_complete_at=time.time())
        self.announce()


def node_plan(settings: Settings, roles: Sequence[str] | str | None = None) -> NodePlan:
    """What this node runs: ``roles`` (``--role``) or the ``roles`` setting."""
    kinds = [k.strip() for k in settings.projections.split(",")]
    return plan(
        parse_roles(roles if roles else settings.roles),
        kinds,
        shared_qdrant=bool(settings.qdrant_url),
    )


def run_worker(
    settings: Settings,
    *,
    web_port: int | None = None,
    datadir: str | None = None,
    loglevel: str = "warning",
    roles: Sequence[str] | str | None = None,
) -> None:
    node = node_plan(settings, roles)
    limit_blas_threads(settings.blas_threads)
    fewer_full_collections()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    # Topics exist before any consumer joins, with the registry's partitions and retention.
    loop.run_until_complete(
        ensure_topics(
            settings.bootstrap(),
            settings.topic_prefix,
            settings.partitions,
            auth=client_options(settings),
        )
    )
    _check_log_identity(settings, loop)
    app: Any = None
    if node.agents:
        app, _topics = create_app(
            settings,
            web_port=web_port,
            datadir=datadir,
            agents=node.agents,
            group=node.group or "worker",
        )
        status_dir = Path(app.conf.datadir)
    else:  # a project node: no agents, no consumer group of faust's
        status_dir = Path(datadir or tempfile.mkdtemp(prefix="memstream-worker-"))
        status_dir.mkdir(parents=True, exist_ok=True)

    def announce() -> None:
        assigned = (read_status(status_dir) or {}).get("assigned", [])
        _say(f"ready: {len(assigned)} partitions assigned, API {api_url}, roles {node.describe()}")

    projections = (
        ProjectionService(
            settings,
            list(node.projections),
            partitioned=node.partitioned,
            attached=node.attached,
            loop=loop,
        )
        if node.projections or node.attached
        else None
    )
    api = ApiService(
        settings,
        settings.api_host,
        settings.api_port or free_port(settings.api_host),
        routes=node.http,
        loop=loop,
    )
    api.projections = projections
    api.roles = list(node.roles)
    from memstream.consumers.health import HealthMonitor

    api.health_monitor = HealthMonitor(
        settings,
        projections,
        agents=node.agents,
        group=node.group or "worker",
        roles=node.roles,
        loop=loop,
    )

    def publish_access(
        namespace: str,
        query_id: str,
        query: str,
        hits: list[tuple[str, float]],
        at: Any,
        top: float,
    ) -> Awaitable[str]:
        # known before the answer is given: feedback on it may follow at once
        api.memory.ids.note_query(namespace, query_id)
        return api.memory._publisher().access(
            namespace=namespace,
            query_id=query_id,
            memories=hits,
            query=query,
            occurred_at=at,
            top_score=top,
        )

    api.publish_access = publish_access
    api_url = f"http://{api.host}:{api.port}"
    services: list[Any] = [s for s in (projections, api.health_monitor, api) if s is not None]
    if app is not None:
        _on_rebalance(app, status_dir, announce)
        api.handles = app.memstream
        app.memstream["recall"] = api.recall_service  # for the Kafka responder
        for service in services:
            app.add_dependency(service)
    record_worker(settings, api_url=api_url, datadir=str(status_dir), roles=list(node.roles))
    _say(
        f"API on {api_url} (health {api_url}/health"
        + (f", dashboard {api_url}/ui/" if node.http == "full" else "")
        + f"), broker {settings.bootstrap()}, data {settings.data_dir}, roles {node.describe()}; "
        + ("joining the consumer group" if app is not None else "starting the projections")
    )

    logging.getLogger("aiokafka").setLevel(logging.WARNING)
    options: dict[str, Any] = dict(
        loop=loop, loglevel=loglevel, quiet=True, redirect_stdouts=False, override_logging=True
    )
    if app is not None:
        Worker(app, **options).execute_from_commandline()
    else:
        ready = _Ready(status_dir, announce, loop=loop)
        mode.Worker(*services, ready, **options).execute_from_commandline()


def _on_rebalance(app: Any, status_dir: Path, announce: Callable[[], None]) -> None:
    """The status file follows the agents' assignment; the first completed rebalance means
    the node consumes from now on."""

    async def _assigned(sender: Any, assigned: set[Any], **_kw: Any) -> None:
        write_status(status_dir, assigned=sorted(f"{tp.topic}:{tp.partition}" for tp in assigned))

    announced = False

    async def _complete(sender: Any, **_kw: Any) -> None:
        nonlocal announced
        write_status(status_dir, rebalance_complete_at=time.time())
        if not announced:
            announced = True
            announce()

    app.on_partitions_assigned.connect(_assigned)
    app.on_rebalance_complete.connect(_complete)
