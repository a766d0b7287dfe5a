"""Health by role: a project node sharing Qdrant's partitions is judged on the partitions it
holds, an API node's agents check is its recall responder's, and the report names the roles."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

from memstream.consumers.health import HealthMonitor
from memstream.infra.log_probe import LogObservation
from memstream.infra.settings import Settings

LOG = "p.memory.log"


class SharedQdrant:
    """A ProjectionService holding partition 0 of the memory log (another node has 1)."""

    runners: ClassVar[dict[str, object]] = {"qdrant": object()}

    def problems_of(self, kind: str) -> list[str]:
        return []

    def positions(self) -> dict[str, dict[str, int]]:
        return {"qdrant": {f"{LOG}/0": 5}}

    def owned(self, kind: str) -> list[str] | None:
        return [f"{LOG}/0"]


def _observed(monitor: HealthMonitor, ends: dict[str, int]) -> None:
    monitor.observation = LogObservation(time.time(), True, ends=ends, epoch="e")
    monitor.positions = monitor.projections.positions()


def _check(monitor: HealthMonitor, name: str) -> Any:
    return next(c for c in monitor.checks() if c.name == name)


def test_a_project_node_is_judged_on_its_own_partitions(tmp_path: Path) -> None:
    s = Settings(kafka_bootstrap="127.0.0.1:1", topic_prefix="p", data_dir=str(tmp_path))
    monitor = HealthMonitor(s, SharedQdrant(), agents=(), roles=("project",))
    _observed(monitor, {f"{LOG}/0": 5, f"{LOG}/1": 9})
    check = _check(monitor, "projection qdrant")
    assert check.ok and check.detail == "at the log's end"  # partition 1 is not its to read
    assert not [c for c in monitor.checks() if c.name.startswith("agent ")]
    assert monitor.probe.group is None  # no agents, no group to probe
    assert monitor.report()["roles"] == ["project"]


def test_an_api_node_checks_its_recall_responder_in_its_group(tmp_path: Path) -> None:
    s = Settings(kafka_bootstrap="127.0.0.1:1", topic_prefix="p", data_dir=str(tmp_path))
    monitor = HealthMonitor(s, None, agents=("recall-responder",), group="api", roles=("api",))
    assert monitor.probe.group == "p-api"
    assert monitor.inputs == {"recall_requests": "recall-responder"}
    everything = HealthMonitor(s, None)
    assert everything.probe.group == "p-worker"
    assert len(everything.inputs) == 5
