"""Shared fixtures: the embedded broker (one per test session) and worker processes."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from memstream.infra.broker import EmbeddedBroker
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from tests.harness import WorkerProcess

# The longest files first (measured with --durations): `make test` hands whole files to two
# processes in collection order (--dist loadfile --no-loadscope-reorder), so a long file
# started last would run alone at the end.
SLOW_FIRST = (
    "integration/test_faults.py",
    "integration/test_crash_restart.py",
    "integration/test_role_nodes.py",
    "integration/test_broker_restart.py",
    "integration/test_snapshots.py",
    "integration/test_projections_live.py",
    "integration/test_read_load.py",
    "integration/test_readme_commands.py",
    "integration/test_installed_package.py",
    "integration/test_broker_outage.py",
    "integration/test_write_path.py",
    "integration/test_rebalance.py",
    "integration/test_stop_mid_batch.py",
    "integration/test_determinism.py",
    "integration/test_context_call.py",
    "integration/test_projection_dead_letters.py",
    "integration/test_category_tree_story.py",
    "integration/test_mcp.py",
)


def _rank(item: pytest.Item) -> int:
    path = str(item.fspath)
    for i, name in enumerate(SLOW_FIRST):
        if path.endswith(name):
            return i
    return len(SLOW_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/integration/" in str(item.fspath) or "/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)
    items.sort(key=_rank)  # stable: the order inside a file is kept


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    log = tmp_path_factory.mktemp("broker") / "broker.log"
    b = EmbeddedBroker(log_path=log).start()
    yield b
    b.stop()


@pytest.fixture(scope="session")
def settings(broker: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    s = Settings(
        kafka_bootstrap=broker.bootstrap,
        topic_prefix="mst",
        data_dir=str(tmp_path_factory.mktemp("data")),
        partitions=4,
        buffer_idle_seconds=1.0,
    )
    asyncio.run(ensure_topics(s.bootstrap(), s.topic_prefix, s.partitions))
    return s


@pytest.fixture(scope="session")
def worker(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    # The scheduled dream cycle is off here: stories with exact Q values or tiers would see
    # its decay; tests/integration/test_lifecycle_story.py runs it on a worker of its own.
    w = WorkerProcess(settings, tmp_path_factory.mktemp("worker"), dream_every_hours="0").start()
    yield w
    w.stop()


@pytest.fixture
def namespace() -> str:
    """A fresh tenant per test: tests share one broker and worker but never each other's data."""
    return f"t-{uuid.uuid4().hex[:12]}"
