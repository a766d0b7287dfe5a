"""The worker's health: what /health and ``memstream status`` report.

A background probe (every ``health_probe_seconds``, bounded by a short timeout) asks the
broker for its topics, end offsets and the agents' committed offsets; /health combines the
latest probe with the projections' own state, so it answers at once even while the broker
does not. The verdicts are pure (``core/health.py``); a check that turns bad is logged as
an error once, and its recovery once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

from mode import Service

from memstream.core.health import (
    Check,
    Since,
    behind,
    identity_check,
    positions_of,
    reader_check,
    status,
    track,
)
from memstream.infra.kafka_auth import client_options
from memstream.infra.log_identity import meta_topic, recorded_epoch
from memstream.infra.log_probe import LogObservation, LogProbe
from memstream.infra.settings import Settings
from memstream.infra.topics import topic_names
from memstream.projections import factory

log = logging.getLogger("memstream.health")

#: the agents' consumer group reads these roles; the name is the agent's
AGENT_INPUTS = {
    "turns": "write-path",
    "access": "access-tracker",
    "feedback": "q-learner",
    "workflows": "workflow-observer",
    "recall_requests": "recall-responder",
}
PROBE_TIMEOUT = 2.0


class HealthMonitor(Service):
    """Probes the log in the background and turns what it saw into checks."""

    def __init__(
        self,
        settings: Settings,
        projections: Any = None,
        *,
        agents: bool | Iterable[str] = True,
        group: str = "worker",
        roles: Sequence[str] = (),
        **kwargs: Any,
    ) -> None:
        """``agents``: also check the agents' consumer group (a worker runs them): True for
        every agent, or the names of the ones this node runs, in consumer group ``group``
        (core/roles.py); ``roles``: the node's roles, for the report."""
        super().__init__(**kwargs)
        from memstream.streams.app import app_id

        self.settings = settings
        self.projections = projections  # projections.service.ProjectionService or None
        self.names = topic_names(settings.topic_prefix)
        names = set(AGENT_INPUTS.values()) if agents is True else set(agents or ())
        #: role of the input topic -> agent, for the agents this node runs
        self.inputs = {role: a for role, a in AGENT_INPUTS.items() if a in names}
        self.roles = list(roles)
        self.probe = LogProbe(
            settings.bootstrap(),
            list(self.names.values()),
            group=app_id(settings, group) if self.inputs else None,
            group_topics=[self.names[role] for role in self.inputs],
            identity_topic=meta_topic(settings.topic_prefix),
            auth=client_options(settings),
        )
        self.agents = bool(self.inputs)
        self.observation: LogObservation | None = None
        self.positions: dict[str, dict[str, int]] = {}  # projections', taken before the probe
        self.tracked: dict[str, Since] = {}
        self._bad: set[str] = set()
        self._task: asyncio.Task[None] | None = None

    async def on_start(self) -> None:
        self._task = asyncio.ensure_future(self._probe_loop())

    async def on_stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        await self.probe.close()

    async def _probe_loop(self) -> None:
        while True:
            try:
                await self.refresh()
            except Exception:  # the monitor must outlive anything it observes
                log.exception("health probe failed")
            await asyncio.sleep(self.settings.health_probe_seconds)

    async def refresh(self) -> None:
        # positions before ends: both only grow on a healthy log, so a position read first
        # can never look past an end read after it
        positions = self.projections.positions() if self.projections is not None else {}
        obs = await self.probe.observe(PROBE_TIMEOUT)
        self.positions, self.observation = positions, obs
        if obs.reachable:
            self.tracked = track(self.tracked, self._readers(obs, positions), obs.at)
        self._log_changes(self.checks(obs.at))

    def _readers(
        self, obs: LogObservation, positions: dict[str, dict[str, int]]
    ) -> dict[str, tuple[tuple[int, ...], int]]:
        """reader -> (its positions, records waiting for it)."""
        out = {}
        readers = [
            (f"projection {kind}", pos, self._tps(obs, self._topics(kind)))
            for kind, pos in positions.items()
        ] + [
            (f"agent {agent}", obs.committed, self._tps(obs, [self.names[role]]))
            for role, agent in self.inputs.items()
        ]
        for name, pos, tps in readers:
            if name.startswith("projection "):
                tps = self._owned(name.removeprefix("projection "), tps)
            ends = {tp: obs.ends[tp] for tp in tps}
            out[name] = (positions_of(pos, tps), behind(pos, ends))
        return out

    def _owned(self, kind: str, tps: list[str]) -> list[str]:
        """Of ``tps``, the ones projection ``kind`` reads on this node (a project node
        sharing a Qdrant server's partitions holds only its share)."""
        proj = self.projections
        owned = proj.owned(kind) if proj is not None else None
        return tps if owned is None else [tp for tp in tps if tp in set(owned)]

    def _topics(self, kind: str) -> list[str]:
        return factory.topics_of(kind, self.settings)

    @staticmethod
    def _tps(obs: LogObservation, topics: list[str]) -> list[str]:
        wanted = set(topics)
        return sorted(tp for tp in obs.ends if tp.rsplit("/", 1)[0] in wanted)

    def checks(self, now: float | None = None) -> list[Check]:
        now = time.time() if now is None else now
        obs = self.observation
        stale = obs is None or now - obs.at > 3 * self.settings.health_probe_seconds + PROBE_TIMEOUT
        out = [self._broker_check(obs, stale)]
        usable = obs is not None and obs.reachable and not stale
        if usable and obs is not None:
            out.append(self._log_check(obs))
        stall = self.settings.health_stall_seconds
        proj = self.projections
        for kind in proj.runners if proj is not None else ():
            name = f"projection {kind}"
            own = proj.problems_of(kind)
            if own:
                out.append(Check(name, False, "; ".join(own)))
            elif usable and obs is not None:
                tps = self._owned(kind, self._tps(obs, self._topics(kind)))
                ends = {tp: obs.ends[tp] for tp in tps}
                out.append(
                    reader_check(
                        name, self.positions.get(kind, {}), ends, self.tracked.get(name), now, stall
                    )
                )
            else:
                out.append(Check(name, True, "running (the log's end is unknown)"))
        if usable and obs is not None and self.agents:
            for role, agent in self.inputs.items():
                name = f"agent {agent}"
                ends = {tp: obs.ends[tp] for tp in self._tps(obs, [self.names[role]])}
                committed = {tp: obs.committed[tp] for tp in ends if tp in obs.committed}
                out.append(
                    reader_check(
                        name,
                        committed,
                        ends,
                        self.tracked.get(name),
                        now,
                        stall,
                        what="committed offset",
                    )
                )
        return out

    def _broker_check(self, obs: LogObservation | None, stale: bool) -> Check:
        where = self.probe.bootstrap
        if obs is None:
            return Check("broker", False, f"not probed yet ({where})")
        if not obs.reachable:
            return Check("broker", False, f"unreachable at {where}: {obs.error}")
        if stale:
            return Check("broker", False, f"no probe of {where} for {time.time() - obs.at:.0f} s")
        if obs.missing:
            return Check(
                "broker",
                False,
                f"topics missing at {where}: {', '.join(obs.missing)} (memstream topics create)",
            )
        return Check("broker", True, f"reachable at {where} ({obs.millis:.0f} ms)")

    def _log_check(self, obs: LogObservation) -> Check:
        recorded = recorded_epoch(self.settings.data_dir, self.settings.topic_prefix)
        return identity_check(recorded, obs.epoch, self.probe.bootstrap)

    def _log_changes(self, checks: list[Check]) -> None:
        bad = {c.name for c in checks if not c.ok}
        for c in checks:
            if not c.ok and c.name not in self._bad:
                log.error("health: %s: %s", c.name, c.detail)
        for name in sorted(self._bad - bad):
            log.warning("health: %s is fine again", name)
        self._bad = bad

    def report(self) -> dict[str, Any]:
        checks = self.checks()
        return {
            "status": status(checks),
            "roles": self.roles,
            "problems": [f"{c.name}: {c.detail}" for c in checks if not c.ok],
            "checks": [c.as_dict() for c in checks],
        }


def stored_positions(settings: Settings) -> dict[str, dict[str, int]]:
    """The positions the stopped worker's projections recorded (DuckDB, the archive)."""
    import duckdb
    import orjson

    from memstream.projections.layout import Layout

    layout = Layout(settings.data_path)
    out: dict[str, dict[str, int]] = {}
    path = layout.duckdb()
    if path.exists():
        with contextlib.suppress(duckdb.Error):
            con = duckdb.connect(str(path), read_only=True)
            try:
                rows = con.execute("SELECT topic, log_partition, next_offset FROM _positions")
                out["duckdb"] = {f"{t}/{p}": o for t, p, o in rows.fetchall()}
            finally:
                con.close()
    archived = layout.archive / "_positions.json"
    if archived.exists():
        raw = orjson.loads(archived.read_bytes())
        out["archive"] = {f"{t}/{p}": o for t, parts in raw.items() for p, o in parts.items()}
    return out


async def offline_checks(settings: Settings) -> list[Check]:
    """What can be told with no worker running: the broker, the recorded positions of the
    projections against the log's ends, and the agents' lag (a snapshot: whether it moves
    needs a running worker)."""
    monitor = HealthMonitor(settings)
    try:
        positions = stored_positions(settings)
        obs = await monitor.probe.observe(PROBE_TIMEOUT * 2)
    finally:
        await monitor.probe.close()
    monitor.observation, monitor.positions = obs, positions
    out = [Check("worker", False, f"not running on {settings.data_dir} (memstream worker)")]
    out.append(monitor._broker_check(obs, stale=False))
    if not obs.reachable:
        return out
    out.append(monitor._log_check(obs))
    for kind, pos in positions.items():
        ends = {tp: obs.ends[tp] for tp in monitor._tps(obs, monitor._topics(kind))}
        out.append(reader_check(f"projection {kind}", pos, ends, None, obs.at, 0.0))
    for role, agent in AGENT_INPUTS.items():
        ends = {tp: obs.ends[tp] for tp in monitor._tps(obs, [monitor.names[role]])}
        committed = {tp: obs.committed[tp] for tp in ends if tp in obs.committed}
        out.append(
            reader_check(
                f"agent {agent}", committed, ends, None, obs.at, 0.0, what="committed offset"
            )
        )
    return out
