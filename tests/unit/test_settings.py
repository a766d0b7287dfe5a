from __future__ import annotations

from pathlib import Path

import pytest

from memstream.infra.settings import ConfigError, Settings, load


def test_env_overrides_file(tmp_path: Path) -> None:
    cfg = tmp_path / "m.toml"
    cfg.write_text('[memstream]\ntopic_prefix = "fromfile"\npartitions = 8\n')
    s = load(cfg, env={"MEMSTREAM_PARTITIONS": "2", "MEMSTREAM_KAFKA_BOOTSTRAP": "k:9092"})
    assert s.topic_prefix == "fromfile" and s.partitions == 2 and s.bootstrap() == "k:9092"


def test_unknown_setting_is_an_error(tmp_path: Path) -> None:
    cfg = tmp_path / "m.toml"
    cfg.write_text("[memstream]\npartitons = 8\n")
    with pytest.raises(ConfigError, match="partitons"):
        load(cfg, env={})


def test_missing_broker_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="MEMSTREAM_KAFKA_BOOTSTRAP"):
        Settings(data_dir=str(tmp_path)).bootstrap()


def test_recorded_embedded_broker_is_used(tmp_path: Path) -> None:
    (tmp_path / "broker.json").write_text('{"bootstrap": "127.0.0.1:1234"}')
    assert Settings(data_dir=str(tmp_path)).bootstrap() == "127.0.0.1:1234"


def test_bad_number(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="partitions"):
        load(tmp_path / "none.toml", env={"MEMSTREAM_PARTITIONS": "many"})
