"""Run a worker process: create the topics, then start the faust worker programmatically.

``app.main()`` never returns and parses sys.argv, so the worker is built by hand. Each
worker needs its own web port and data directory.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from pathlib import Path
from typing import Any

from faust.worker import Worker

from memstream.consumers.http_api import ApiService
from memstream.core.health import identity_check
from memstream.infra.broker import free_port
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


def run_worker(
    settings: Settings,
    *,
    web_port: int | None = None,
    datadir: str | None = None,
    loglevel: str = "warning",
) -> None:
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
    app, _topics = create_app(settings, web_port=web_port, datadir=datadir)
    status_dir = Path(app.conf.datadir)

    async def _assigned(sender: Any, assigned: set[Any], **_kw: Any) -> None:
        write_status(status_dir, assigned=sorted(f"{tp.topic}:{tp.partition}" for tp in assigned))

    announced = False

    async def _complete(sender: Any, **_kw: Any) -> None:
        nonlocal announced
        write_status(status_dir, rebalance_complete_at=time.time())
        if not announced:  # the first rebalance: from now on turns are consumed
            announced = True
            assigned = (read_status(status_dir) or {}).get("assigned", [])
            _say(f"ready: {len(assigned)} partitions assigned, API {api_url}")

    app.on_partitions_assigned.connect(_assigned)  # type: ignore[arg-type]
    app.on_rebalance_complete.connect(_complete)  # type: ignore[arg-type]

    kinds = [
        k.strip() for k in settings.projections.split(",") if k.strip() and k.strip() != "none"
    ]
    projections = ProjectionService(settings, kinds, loop=loop) if kinds else None
    if projections is not None:
        app.add_dependency(projections)
    api = ApiService(
        settings, settings.api_host, settings.api_port or free_port(settings.api_host), loop=loop
    )
    api.projections = projections
    from memstream.consumers.health import HealthMonitor

    api.health_monitor = HealthMonitor(settings, projections, loop=loop)
    app.add_dependency(api.health_monitor)

    async def publish_access(
        namespace: str,
        query_id: str,
        query: str,
        hits: list[tuple[str, float]],
        at: Any,
        top: float,
    ) -> None:
        api.memory.ids.note_query(namespace, query_id)  # feedback on it may follow at once
        await api.memory._publisher().access(
            namespace=namespace,
            query_id=query_id,
            memories=hits,
            query=query,
            occurred_at=at,
            top_score=top,
        )

    api.publish_access = publish_access
    api.handles = app.memstream  # type: ignore[attr-defined]
    app.memstream["recall"] = api.recall_service  # type: ignore[attr-defined]  # for the Kafka responder
    app.add_dependency(api)
    api_url = f"http://{api.host}:{api.port}"
    record_worker(settings, api_url=api_url, datadir=str(status_dir))
    _say(
        f"API on {api_url} (health {api_url}/health, dashboard {api_url}/ui/), "
        f"broker {settings.bootstrap()}, "
        f"data {settings.data_dir}; joining the consumer group"
    )

    logging.getLogger("aiokafka").setLevel(logging.WARNING)
    worker = Worker(
        app, loop=loop, loglevel=loglevel, quiet=True, redirect_stdouts=False, override_logging=True
    )
    worker.execute_from_commandline()
