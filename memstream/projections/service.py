"""Running the projections inside a worker: one reader per projection, all in one service."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from mode import Service

from memstream.infra.kafka_auth import client_options
from memstream.infra.settings import Settings
from memstream.projections import factory
from memstream.projections.duckdb_projection import DuckDBProjection
from memstream.projections.port import LogRecord
from memstream.projections.qdrant_projection import QdrantProjection
from memstream.projections.runner import ProjectionRunner
from memstream.schemas._fields import utc_now
from memstream.schemas.errors import EventValidationError
from memstream.schemas.topics import BY_ROLE
from memstream.streams.deadletter import dead_letter_from, encode_dead_letter

log = logging.getLogger("memstream.projections")


class ProjectionService(Service):
    """Keeps the read models current while the worker runs."""

    def __init__(
        self,
        settings: Settings,
        kinds: list[str],
        *,
        partitioned: Iterable[str] = (),
        attached: Iterable[str] = (),
        **kwargs: Any,
    ) -> None:
        """``partitioned``: kinds whose readers share the partitions with the other nodes'
        (consumer group ``<prefix>-project-<kind>``, for a store the nodes share);
        ``attached``: kinds read from a shared store that this node does not feed."""
        super().__init__(**kwargs)
        self.settings = settings
        self.kinds = kinds
        self.partitioned = frozenset(partitioned)
        self.attached_kinds = [k for k in attached if k not in kinds]
        self.attached: dict[str, Any] = {}  # kind -> projection, read only here
        self.runners: dict[str, ProjectionRunner] = {}
        self._stop = asyncio.Event()
        self._runner_tasks: list[asyncio.Task[None]] = []
        self._dlq_producer: Any = None

    async def _dead_letter(self, kind: str, reason: str, record: LogRecord) -> None:
        """A record projection ``kind`` cannot apply goes to the dead-letter topic with its
        reason and original bytes, durably, before the projection steps over it."""
        from aiokafka import AIOKafkaProducer

        if self._dlq_producer is None:
            producer = AIOKafkaProducer(
                bootstrap_servers=self.settings.bootstrap(),
                acks="all",
                **client_options(self.settings),
            )
            await producer.start()
            self._dlq_producer = producer
        dl = dead_letter_from(
            EventValidationError("projection_error", reason),
            original=record.value,
            original_key=record.key,
            source_topic=record.topic,
            partition=record.partition,
            offset=record.offset,
            agent=f"projection:{kind}",
            failed_at=utc_now(),
        )
        value, headers = encode_dead_letter(dl)
        topic = BY_ROLE["dlq"].name(self.settings.topic_prefix)
        await self._dlq_producer.send_and_wait(topic, value, key=record.key, headers=headers)

    async def on_start(self) -> None:
        for kind in self.kinds:

            async def sink(reason: str, record: LogRecord, kind: str = kind) -> None:
                await self._dead_letter(kind, reason, record)

            runner = ProjectionRunner(
                self.settings.bootstrap(),
                factory.topics_of(kind, self.settings),
                await asyncio.to_thread(factory.build, kind, self.settings),
                dead_letter=sink,
                auth=client_options(self.settings),
                group=projection_group(self.settings, kind) if kind in self.partitioned else None,
                session_timeout=self.settings.broker_session_timeout,
                heartbeat_interval=self.settings.broker_heartbeat_interval,
                linger=self.settings.projection_linger_seconds,
                telemetry=factory.telemetry_topics(self.settings),
                telemetry_wait=self.settings.projection_telemetry_wait_seconds,
            )
            self.runners[kind] = runner
            self._runner_tasks.append(asyncio.ensure_future(self._run(kind, runner)))

    async def _run(self, kind: str, runner: ProjectionRunner) -> None:
        while not self._stop.is_set():
            try:
                await runner.run(self._stop)
            except Exception as e:
                # The store holds its own positions: resume from them after a pause. A failing
                # batch was rolled back (DuckDB) or is idempotent to repeat (Qdrant, archive).
                # Single poison records never get here (the runner dead-letters them); this is
                # the store or the broker failing, and /health says so meanwhile.
                runner.failed(e)
                log.exception(
                    "projection %s failed; resuming from its recorded positions in 5 s", kind
                )
                await asyncio.sleep(5.0)

        for kind in self.attached_kinds:
            self.attached[kind] = await asyncio.to_thread(factory.build, kind, self.settings)

    async def on_stop(self) -> None:
        self._stop.set()
        await asyncio.gather(*self._runner_tasks, return_exceptions=True)
        for runner in self.runners.values():
            await asyncio.to_thread(runner.close)
        for projection in self.attached.values():
            await asyncio.to_thread(projection.close)
        if self._dlq_producer is not None:
            await self._dlq_producer.stop()

    @property
    def duckdb(self) -> DuckDBProjection | None:
        runner = self.runners.get("duckdb")
        return (
            runner.projection
            if runner and isinstance(runner.projection, DuckDBProjection)
            else None
        )

    @property
    def qdrant(self) -> QdrantProjection | None:
        runner = self.runners.get("qdrant")
        found = runner.projection if runner else self.attached.get("qdrant")
        return found if isinstance(found, QdrantProjection) else None

    def owned(self, kind: str) -> list[str] | None:
        """The "topic/partition"s projection ``kind`` holds on this node when it shares
        them with other nodes; None: every partition of its topics."""
        runner = self.runners.get(kind)
        if runner is None or kind not in self.partitioned:
            return None
        return sorted(runner.applied_to)

    def caught_up(self) -> bool:
        return all(r.caught_up.is_set() for r in self.runners.values())

    def lag(self) -> dict[str, dict[str, int]]:
        return {
            kind: {
                "records": r.stats.records,
                "applied": r.stats.applied,
                "duplicates": r.stats.duplicates,
                "rejected": r.stats.rejected,
                "dead_lettered": r.health.dead_lettered,
            }
            for kind, r in self.runners.items()
        }

    def positions(self) -> dict[str, dict[str, int]]:
        """Next offset per "topic/partition" each projection applied since this start."""
        return {kind: dict(r.applied_to) for kind, r in self.runners.items()}

    def status(self) -> dict[str, dict[str, Any]]:
        """Each running projection, for health checks (wall-clock times of this process):
        ``caught_up`` (reached the log's end once since the start), ``last_error``,
        ``retrying_since`` (time.time() of the first failure of the current streak of store
        or broker errors; None while it applies), ``dead_lettered`` (records it could not
        apply, sent to the dead-letter topic and stepped over since the start),
        ``last_progress`` (time.time() of the last applied batch)."""
        return {
            kind: {
                "caught_up": r.caught_up.is_set(),
                "last_error": r.health.last_error,
                "retrying_since": r.health.failing_since,
                "dead_lettered": r.health.dead_lettered,
                "last_progress": r.health.last_progress,
            }
            for kind, r in self.runners.items()
        }

    def problems_of(self, kind: str) -> list[str]:
        """Why projection ``kind`` is not healthy by its own account, in words ([] when it
        is); /health adds what the log says (stalled, read position past the log's end)."""
        runner = self.runners.get(kind)
        if runner is None:
            return []
        h, out = runner.health, []
        if h.failing_since is not None:
            out.append(f"retrying since {_ago(h.failing_since)}: {h.last_error}")
        if h.dead_lettered:
            out.append(
                f"dead-lettered {h.dead_lettered} record(s) it could not apply (memstream dlq)"
            )
        return out

    def problems(self) -> list[str]:
        """Why the projections are not healthy, in words ([] when they are)."""
        return [f"projection {kind} {p}" for kind in self.runners for p in self.problems_of(kind)]


def projection_group(settings: Settings, kind: str) -> str:
    """The consumer group in which project nodes share projection ``kind``'s partitions."""
    return f"{settings.topic_prefix}-project-{kind}"


def _ago(at: float) -> str:
    import time

    return f"{time.time() - at:.0f} s ago"
