"""Bad arguments to the commands, each a one-line error that names it, never a traceback:
a time flag that is not a time, or one UTC cannot hold, is argparse's usage error naming the
flag before anything opens (`memstream audit --as-of`, `memstream replay --until`); a file
that is not there, or a projection not built yet, is named with its path."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstream.consumers.cli import main
from memstream.consumers.cli_common import _parse_time
from memstream.schemas.errors import EventValidationError

BAD = ("yesterday", "2024-13-01", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00")
COMMANDS = (
    ["audit", "--namespace", "acme", "--as-of"],
    ["replay", "--until"],
    ["recall", "where?", "--namespace", "acme", "--as-of"],
    ["consolidate", "--at"],
    ["graph", "m1", "--namespace", "acme", "--as-of"],
    ["tree", "show", "--namespace", "acme", "--at"],
    ["tree", "add", "work", "--namespace", "acme", "--at"],
)


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_bad_time_flag_is_a_usage_error_naming_it(
    command: list[str], bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*command, bad])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {command[-1]}" in err, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(f"memstream {command[0]}"), err


def test_times_are_read_as_utc_and_no_offset_means_utc() -> None:
    assert _parse_time("2024-05-01T10:00:00+02:00") == datetime(2024, 5, 1, 8, tzinfo=UTC)
    assert _parse_time("2024-05-01") == datetime(2024, 5, 1, tzinfo=UTC)
    with pytest.raises(EventValidationError) as caught:
        _parse_time("0001-01-01T00:00:00+14:00", "--as-of")
    assert (caught.value.code, caught.value.path) == ("bad_datetime", "--as-of")


@pytest.mark.parametrize(
    "command",
    [
        ["recall", "--batch", "{missing}"],
        ["recall", "--batch", "{dir}"],
        ["metadata", "--namespace", "acme"],
        ["gaps", "--namespace", "acme"],
        ["audit", "m1"],
        ["audit", "--namespace", "acme", "--as-of", "2024-05-01T00:00:00+00:00"],
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_a_missing_file_or_projection_is_one_line_naming_it(
    command: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MEMSTREAM_DATA_DIR", str(tmp_path / "data"))
    argv = [a.format(missing=tmp_path / "nope.jsonl", dir=tmp_path) for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"memstream {command[0]}: "), err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert str(tmp_path) in err  # which path
