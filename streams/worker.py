"""Run a worker process: create the topics, then start the faust worker programmatically.

``app.main()`` never returns and parses sys.argv, so the worker is built by hand. Each
worker needs its own web port and data directory.
"""

from __future__ import annotations

import asyncio
import logging
import time

from faust.worker import Worker

from infra.settings import Settings
from infra.topics import ensure_topics
from streams.app import create_app
from streams.status import write_status


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
    loop.run_until_complete(ensure_topics(settings.bootstrap(), settings.topic_prefix, settings.partitions))
    app, _topics = create_app(settings, web_port=web_port, datadir=datadir)
    datadir = app.conf.datadir

    @app.on_partitions_assigned.connect  # type: ignore[untyped-decorator]
    async def _assigned(sender: object, assigned: set[object], **_kw: object) -> None:
        parts = sorted(f"{tp.topic}:{tp.partition}" for tp in assigned)  # type: ignore[attr-defined]
        write_status(datadir, assigned=parts)

    @app.on_rebalance_complete.connect  # type: ignore[untyped-decorator]
    async def _complete(sender: object, **_kw: object) -> None:
        write_status(datadir, rebalance_complete_at=time.time())

    logging.getLogger("aiokafka").setLevel(logging.WARNING)
    worker = Worker(app, loop=loop, loglevel=loglevel, quiet=True, redirect_stdouts=False, override_logging=True)
    worker.execute_from_commandline()
