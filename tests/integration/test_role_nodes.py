"""Worker roles (``memstream worker --role``, core/roles.py) as separate processes on the
embedded broker: a write node extracts, a project node keeps the projections, an API node
answers recall from its own replicas. The write node is SIGKILLed while turns arrive and
restarted: every turn is extracted exactly once, and recall is answered by the API node."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from memstream.consumers.producer import AsyncProducer, turn_event
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.topics import BY_ROLE
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess, memstream
from tests.reliability.driver import LogTail, workload

TURNS = 160


def _health(api: str) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(f"{api}/health", timeout=10).json()
    return body


def _api(s: Settings) -> str:
    info = running_worker(s.data_dir)
    assert info is not None, f"no running worker on {s.data_dir}"
    return str(info["api_url"])


async def test_write_project_and_api_nodes_split_the_work(
    settings: Settings, tmp_path: Path
) -> None:
    own = settings.with_(topic_prefix=f"msroles{random.randrange(10**6)}")
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    nodes = {
        role: (
            own.with_(data_dir=str(tmp_path / role)),
            WorkerProcess(
                own.with_(data_dir=str(tmp_path / role)),
                tmp_path / role / "worker",
                roles=role,
                dream_every_hours="0",
            ),
        )
        for role in ("write", "project", "api")
    }
    envs = workload(TURNS, own)
    ns = f"roles-{random.randrange(10**6)}"
    lisbon = turn_event(
        namespace=ns,
        session_id="s1",
        turn_id="lisbon",
        role="user",
        speaker="Maya",
        text="I moved to Lisbon last spring.",
        occurred_at=datetime(2024, 5, 1, tzinfo=UTC),
    )
    envs.insert(TURNS // 2, lisbon)
    wanted = {(e.namespace, e.payload.turn_id) for e in envs}
    tail = await LogTail(own.bootstrap(), BY_ROLE["memory_log"].name(own.topic_prefix)).start()
    write = nodes["write"][1]
    t0 = time.monotonic()
    times: dict[str, float] = {}
    try:
        with ThreadPoolExecutor(3) as pool:  # the three start side by side
            list(pool.map(lambda n: n[1].start(90.0), nodes.values()))
        times["started"] = time.monotonic() - t0
        apis = {role: _api(s) for role, (s, _w) in nodes.items()}
        for role, api in apis.items():
            assert _health(api)["roles"] == [role]
        out = memstream(nodes["api"][0], "status")
        assert "roles: api" in out.stdout, out.stdout + out.stderr
        # only an API node serves recall; the others answer their health
        assert httpx.post(f"{apis['write']}/v1/recall", json={}, timeout=10).status_code == 404

        async def publish() -> None:
            async with AsyncProducer(own, producer_name="roles-test") as producer:
                for i in range(0, len(envs), 20):
                    await producer.publish_many(envs[i : i + 20])
                    await asyncio.sleep(0.4)

        async def crash() -> None:
            await asyncio.sleep(1.5)
            write.kill()  # SIGKILL mid-stream: held turns were never acknowledged
            await asyncio.to_thread(write.start, 90.0)

        await asyncio.gather(publish(), crash())
        times["published, write node restarted"] = time.monotonic() - t0

        covered: Counter[tuple[str, str]] = Counter()
        seen: set[str] = set()
        deadline = time.monotonic() + 45
        while not wanted <= set(covered):
            assert time.monotonic() < deadline, (
                f"never extracted: {sorted(wanted - set(covered))[:5]}"
            )
            for r in await tail.poll():
                env = decode(r.value)
                if env.type == "TurnsExtracted" and env.event_id not in seen:
                    covered.update((env.namespace, t.turn_id) for t in env.payload.turns)
                seen.add(env.event_id)
            await asyncio.sleep(0.5)
        assert [k for k, n in covered.items() if n > 1] == [], "turns extracted twice"
        times["extracted"] = time.monotonic() - t0

        # recall answered by the API node from its own replicas, fed by the log
        results: list[Any] = []
        while not results:
            assert time.monotonic() < deadline, "the API node never recalled the move"
            r = httpx.post(
                f"{apis['api']}/v1/recall",
                json={"namespace": ns, "query": "where did I move?"},
                timeout=30,
            )
            assert r.status_code == 200, r.text
            results = r.json()["results"]
            await asyncio.sleep(0.3)
        assert "Lisbon" in results[0]["text"]
        times["recalled"] = time.monotonic() - t0
        # the project node keeps the projections: every turn in its DuckDB once
        rows: Any = None
        while rows != len(envs):
            assert time.monotonic() < deadline, f"project node's turns table: {rows}"
            body = httpx.post(
                f"{apis['project']}/sql", json={"sql": "SELECT count(*) FROM turns"}, timeout=10
            ).json()
            rows = body["rows"][0][0]
            await asyncio.sleep(0.3)
        times["projected"] = time.monotonic() - t0
        print(", ".join(f"{k} {v:.1f}s" for k, v in times.items()))
        # the restarted write node keeps no projection either
        assert _health(_api(nodes["write"][0]))["projections"] == {}
    finally:
        await tail.stop()
        with ThreadPoolExecutor(3) as pool:
            list(pool.map(lambda n: n[1].stop(), nodes.values()))
