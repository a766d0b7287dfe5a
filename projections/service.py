"""Running the projections inside a worker: one reader per projection, all in one service."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mode import Service

from infra.settings import Settings
from projections import factory
from projections.duckdb_projection import DuckDBProjection
from projections.qdrant_projection import QdrantProjection
from projections.runner import ProjectionRunner

log = logging.getLogger("memstream.projections")


class ProjectionService(Service):
    """Keeps the read models current while the worker runs."""

    def __init__(self, settings: Settings, kinds: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settings = settings
        self.kinds = kinds
        self.runners: dict[str, ProjectionRunner] = {}
        self._stop = asyncio.Event()
        self._runner_tasks: list[asyncio.Task[None]] = []

    async def on_start(self) -> None:
        for kind in self.kinds:
            runner = ProjectionRunner(
                self.settings.bootstrap(),
                factory.topics_of(kind, self.settings),
                await asyncio.to_thread(factory.build, kind, self.settings),
            )
            self.runners[kind] = runner
            self._runner_tasks.append(asyncio.ensure_future(self._run(kind, runner)))

    async def _run(self, kind: str, runner: ProjectionRunner) -> None:
        while not self._stop.is_set():
            try:
                await runner.run(self._stop)
            except Exception:
                # The store holds its own positions: resume from them after a pause. A failing
                # batch was rolled back (DuckDB) or is idempotent to repeat (Qdrant, archive).
                log.exception(
                    "projection %s failed; resuming from its recorded positions in 5 s", kind
                )
                await asyncio.sleep(5.0)

    async def on_stop(self) -> None:
        self._stop.set()
        await asyncio.gather(*self._runner_tasks, return_exceptions=True)
        for runner in self.runners.values():
            await asyncio.to_thread(runner.close)

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
        return (
            runner.projection
            if runner and isinstance(runner.projection, QdrantProjection)
            else None
        )

    def caught_up(self) -> bool:
        return all(r.caught_up.is_set() for r in self.runners.values())

    def lag(self) -> dict[str, dict[str, int]]:
        return {
            kind: {
                "records": r.stats.records,
                "applied": r.stats.applied,
                "duplicates": r.stats.duplicates,
                "rejected": r.stats.rejected,
            }
            for kind, r in self.runners.items()
        }
