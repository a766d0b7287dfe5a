"""Forgetting settings reach the dream cycle: the retention model and the capacity trim."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstream.core.lifecycle import LifecycleConfig, MemoryView, plan_forgetting, retention
from memstream.infra.settings import ConfigError, Settings, load
from memstream.streams.consolidation import lifecycle_config

AT = datetime(2025, 1, 1, tzinfo=UTC)


def test_defaults_are_weibull_and_a_generous_capacity() -> None:
    config = lifecycle_config(Settings())
    assert config.retention_model == "weibull"
    assert config.capacity_of("any") == 10_000


def test_env_selects_fsrs_and_sets_the_capacity(tmp_path: Path) -> None:
    env = {"MEMSTREAM_RETENTION_MODEL": "fsrs", "MEMSTREAM_MEMORY_CAPACITY": "2"}
    config = lifecycle_config(load(tmp_path / "none.toml", env=env))
    assert config.retention_model == "fsrs" and config.capacity_of("ns") == 2
    m = MemoryView("m", "ns", "a fact", "fact", AT - timedelta(days=9), tier="core")
    assert retention(m, AT, config) == pytest.approx(0.5)  # (1 + 9 / 9) ** -1


def test_capacity_from_settings_trims_the_least_useful(tmp_path: Path) -> None:
    config = lifecycle_config(load(tmp_path / "none.toml", env={"MEMSTREAM_MEMORY_CAPACITY": "2"}))
    views = [
        MemoryView(f"m{i}", "ns", f"fact {i}", "fact", AT, q_value=0.1 * i) for i in range(1, 4)
    ]
    (action,) = plan_forgetting(views, None, AT, config).actions
    assert (action.memory_id, action.rule, action.evidence["capacity"]) == ("m1", "capacity", 2)


def test_zero_capacity_means_no_limit(tmp_path: Path) -> None:
    config = lifecycle_config(load(tmp_path / "none.toml", env={"MEMSTREAM_MEMORY_CAPACITY": "0"}))
    assert config.capacity_of("ns") is None
    assert LifecycleConfig().capacity_of("ns") is None  # the pure default: no limit


def test_bad_values_name_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="retention_model"):
        load(tmp_path / "none.toml", env={"MEMSTREAM_RETENTION_MODEL": "ebbinghaus"})
    with pytest.raises(ConfigError, match="memory_capacity"):
        load(tmp_path / "none.toml", env={"MEMSTREAM_MEMORY_CAPACITY": "-1"})


def test_recall_scores_retention_with_the_same_model() -> None:
    from types import SimpleNamespace

    from memstream.consumers.recall_factory import recall_service_for

    projections = SimpleNamespace(duckdb=None, qdrant=SimpleNamespace(store=None))
    for model in ("weibull", "fsrs"):
        chosen = Settings(retention_model=model, embedder="hashing")
        assert recall_service_for(chosen, projections, None).retention_model == model
