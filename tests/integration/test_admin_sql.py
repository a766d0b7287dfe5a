"""Admin SQL cannot hurt the worker: a statement is stopped after ``sql_timeout_seconds``
(default 5), or as soon as its HTTP client goes away; recall answers while one runs; and
every DuckDB type comes back as JSON (HUGEINT, DECIMAL, INTERVAL, BLOB, UUID, nested)
instead of a 500."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess, memstream

pytestmark = pytest.mark.integration

HEAVY = "SELECT count(*) FROM range(100000000000) a"  # minutes of work: stopped long before


def _api(settings: Settings) -> str:
    return str(running_worker(settings.data_dir)["api_url"])  # type: ignore[index]


def _metric(api: str, name: str) -> int:
    text = httpx.get(f"{api}/metrics", timeout=10).text
    for line in text.splitlines():
        if line.startswith(f"memstream_http_{name}_total "):
            return int(float(line.split()[1]))
    return 0


def test_every_duckdb_type_comes_back_as_json(settings: Settings, worker: WorkerProcess) -> None:
    sql = r"""
        SELECT 170141183460469231731687303715884105727::HUGEINT AS huge,
               340282366920938463463374607431768211455::UHUGEINT AS uhuge,
               12345678901234567890.123456789::DECIMAL(38, 9) AS dec,
               INTERVAL 1 DAY + INTERVAL 2 HOUR AS span,
               '\xAA\x00ab'::BLOB AS blob,
               '8c7a5f1e-1b5a-4c7a-9c1e-000000000001'::UUID AS id,
               [1::HUGEINT, 99999999999999999999::HUGEINT] AS list,
               {'k': 99999999999999999999::HUGEINT, 'd': 1.50::DECIMAL(4, 2)} AS struct,
               MAP {1: 'one'} AS map,
               'NaN'::DOUBLE AS nan,
               DATE '2024-05-01' AS day,
               42::TINYINT AS small
    """
    response = httpx.post(f"{_api(settings)}/sql", json={"sql": sql}, timeout=30)
    assert response.status_code == 200, response.text
    body = response.json()
    row = dict(zip(body["columns"], body["rows"][0], strict=True))
    assert row["huge"] == "170141183460469231731687303715884105727"
    assert row["uhuge"] == "340282366920938463463374607431768211455"
    assert row["dec"] == "12345678901234567890.123456789"
    assert row["span"] == "1 day, 2:00:00"
    assert row["blob"] == "\\xAA\\x00ab"
    assert row["id"] == "8c7a5f1e-1b5a-4c7a-9c1e-000000000001"
    assert row["list"] == [1, "99999999999999999999"]
    assert row["struct"] == {"k": "99999999999999999999", "d": "1.50"}
    assert row["nan"] is None and row["day"] == "2024-05-01" and row["small"] == 42
    assert row["map"] in ({"1": "one"}, {"key": [1], "value": ["one"]})
    # the CLI prints them through the worker too
    out = memstream(settings, "sql", "SELECT 1::HUGEINT << 100 AS big", "--format", "json")
    assert out.returncode == 0 and '"big":"1267650600228229401496703205376"' in out.stdout, out


def test_a_long_statement_is_stopped_and_recall_answers_meanwhile(
    settings: Settings, worker: WorkerProcess, namespace: str
) -> None:
    api = _api(settings)
    with Memory(settings=settings) as mem:
        mem.add(
            "I moved to Lisbon last spring.",
            user_id=namespace,
            occurred_at=datetime(2024, 5, 1, tzinfo=UTC),
        )
        deadline = time.monotonic() + 60
        while not mem.search("where did I move?", user_id=namespace)["results"]:
            assert time.monotonic() < deadline, "the memory never became recallable"
            time.sleep(0.5)
    timeouts = _metric(api, "sql_timeouts")
    finished: dict[str, Any] = {}

    def heavy() -> None:
        started = time.monotonic()
        finished["sql"] = httpx.post(f"{api}/sql", json={"sql": HEAVY}, timeout=60)
        finished["sql_at"] = time.monotonic()
        finished["sql_seconds"] = finished["sql_at"] - started

    thread = threading.Thread(target=heavy)
    thread.start()
    time.sleep(1.0)  # the statement is running
    recall = httpx.post(
        f"{api}/v1/recall", json={"namespace": namespace, "query": "where did I move?"}, timeout=60
    )
    recalled_at = time.monotonic()
    thread.join(60)
    assert recall.status_code == 200 and recall.json()["results"], recall.text
    # the recall's own time, for clients and benchmarks (W3C Server-Timing)
    timing = recall.headers["server-timing"]
    assert timing.startswith("recall;dur=") and float(timing.split("dur=")[1]) > 0, timing
    assert recalled_at < finished["sql_at"], "recall waited for the SQL statement"
    response = finished["sql"]
    assert response.status_code == 408, response.text
    assert response.json()["error"]["code"] == "sql_timeout"
    assert "sql_timeout_seconds" in response.json()["error"]["message"]
    assert finished["sql_seconds"] < 30  # stopped at its timeout, not run to its end
    assert _metric(api, "sql_timeouts") == timeouts + 1


def test_a_statement_whose_client_went_away_is_stopped(
    settings: Settings, worker: WorkerProcess
) -> None:
    api = _api(settings)
    cancelled, timeouts = _metric(api, "sql_cancelled"), _metric(api, "sql_timeouts")
    with pytest.raises(httpx.ReadTimeout):  # the client gives up after 1 s and hangs up
        httpx.post(f"{api}/sql", json={"sql": HEAVY}, timeout=1.0)
    deadline = time.monotonic() + 3.0  # well before the 5 s timeout would stop it
    while _metric(api, "sql_cancelled") == cancelled:
        assert time.monotonic() < deadline, "the statement ran on after its client left"
        time.sleep(0.2)
    assert _metric(api, "sql_timeouts") == timeouts
    ok = httpx.post(f"{api}/sql", json={"sql": "SELECT 42"}, timeout=10)
    assert ok.status_code == 200 and ok.json()["rows"] == [[42]]
