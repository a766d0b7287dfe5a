"""Worker roles (``memstream worker --role``, core/roles.py) as separate processes on the
embedded broker: write nodes extract, project nodes keep the projections, API nodes answer
recall from their own replicas. Nodes are SIGKILLed while turns arrive and restarted: every
turn is extracted exactly once, and recall is answered by the API nodes.

``make test`` runs one node of each role and kills the write node; ``make soak`` runs the
topology of issue 18 (2 write + 1 project + 2 API nodes, one of each role killed, `memstream
verify` on the project node, both API nodes' answers compared)."""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from memstream.consumers.producer import AsyncProducer, turn_event
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.topics import BY_ROLE
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess, memstream
from tests.reliability.driver import LogTail, workload


@dataclass(frozen=True)
class Topology:
    nodes: tuple[str, ...]  # roles, one entry per node
    kill: tuple[str, ...]  # roles of which the first node is SIGKILLed mid-stream
    turns: int = 160
    verify: bool = False


def _health(api: str) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(f"{api}/health", timeout=10).json()
    return body


def _api(s: Settings) -> str:
    info = running_worker(s.data_dir)
    assert info is not None, f"no running worker on {s.data_dir}"
    return str(info["api_url"])


def _parallel(nodes: list[WorkerProcess], what: str) -> None:
    with ThreadPoolExecutor(len(nodes)) as pool:
        list(pool.map(lambda n: n.start(90.0) if what == "start" else n.stop(), nodes))


async def _run(settings: Settings, tmp_path: Path, topo: Topology) -> dict[str, float]:
    own = settings.with_(topic_prefix=f"msroles{random.randrange(10**6)}")
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    names = [f"{role}{topo.nodes[:i].count(role)}" for i, role in enumerate(topo.nodes)]
    conf = {n: own.with_(data_dir=str(tmp_path / n)) for n in names}
    nodes = {
        n: WorkerProcess(conf[n], tmp_path / n / "worker", roles=role, dream_every_hours="0")
        for n, role in zip(names, topo.nodes, strict=True)
    }
    envs = workload(topo.turns, own)
    ns = f"roles-{random.randrange(10**6)}"
    envs.insert(
        topo.turns // 2,
        turn_event(
            namespace=ns,
            session_id="s1",
            turn_id="lisbon",
            role="user",
            speaker="Maya",
            text="I moved to Lisbon last spring.",
            occurred_at=datetime(2024, 5, 1, tzinfo=UTC),
        ),
    )
    wanted = {(e.namespace, e.payload.turn_id) for e in envs}
    tail = await LogTail(own.bootstrap(), BY_ROLE["memory_log"].name(own.topic_prefix)).start()
    t0 = time.monotonic()
    times: dict[str, float] = {}
    try:
        _parallel(list(nodes.values()), "start")  # side by side
        times["started"] = time.monotonic() - t0
        for n, role in zip(names, topo.nodes, strict=True):
            assert _health(_api(conf[n]))["roles"] == [role]
        out = memstream(conf[names[topo.nodes.index("api")]], "status")
        assert "roles: api" in out.stdout, out.stdout + out.stderr
        # only an API node serves recall; a write node answers its health and admin calls
        write_api = _api(conf[names[topo.nodes.index("write")]])
        assert httpx.post(f"{write_api}/v1/recall", json={}, timeout=10).status_code == 404

        async def publish() -> None:
            async with AsyncProducer(own, producer_name="roles-test") as producer:
                for i in range(0, len(envs), 20):
                    await producer.publish_many(envs[i : i + 20])
                    await asyncio.sleep(0.4)

        async def crash(role: str, after: float) -> None:
            node = nodes[names[topo.nodes.index(role)]]
            await asyncio.sleep(after)
            node.kill()  # SIGKILL mid-stream: held turns were never acknowledged
            await asyncio.to_thread(node.start, 90.0)

        await asyncio.gather(publish(), *(crash(role, 1.5 + i) for i, role in enumerate(topo.kill)))
        times["published, nodes restarted"] = time.monotonic() - t0

        covered: Counter[tuple[str, str]] = Counter()
        seen: set[str] = set()
        deadline = time.monotonic() + 60
        while not wanted <= set(covered):
            missing = sorted(wanted - set(covered))[:5]
            assert time.monotonic() < deadline, f"never extracted: {missing}"
            for r in await tail.poll():
                env = decode(r.value)
                if env.type == "TurnsExtracted" and env.event_id not in seen:
                    covered.update((env.namespace, t.turn_id) for t in env.payload.turns)
                seen.add(env.event_id)
            await asyncio.sleep(0.5)
        assert [k for k, n in covered.items() if n > 1] == [], "turns extracted twice"
        times["extracted"] = time.monotonic() - t0

        # recall answered by every API node from its own replicas, fed by the log
        answers = []
        for n in (n for n, role in zip(names, topo.nodes, strict=True) if role == "api"):
            results: list[Any] = []
            while not results:
                assert time.monotonic() < deadline, f"{n} never recalled the move"
                r = httpx.post(
                    f"{_api(conf[n])}/v1/recall",
                    json={"namespace": ns, "query": "where did I move?"},
                    timeout=30,
                )
                assert r.status_code == 200, r.text
                results = r.json()["results"]
                await asyncio.sleep(0.3)
            assert "Lisbon" in results[0]["text"]
            answers.append([(h["memory_id"], h["text"]) for h in results])
        assert all(a == answers[0] for a in answers), answers  # the API nodes agree
        times["recalled"] = time.monotonic() - t0

        # a project node keeps the projections: every turn in its DuckDB once
        project = conf[names[topo.nodes.index("project")]]
        rows: Any = None
        while rows != len(envs):
            assert time.monotonic() < deadline, f"project node's turns table: {rows}"
            body = httpx.post(
                f"{_api(project)}/sql", json={"sql": "SELECT count(*) FROM turns"}, timeout=10
            ).json()
            rows = body["rows"][0][0]
            await asyncio.sleep(0.3)
        times["projected"] = time.monotonic() - t0
        if topo.verify:
            result = await asyncio.to_thread(memstream, project, "verify", timeout=300)
            assert result.returncode == 0, result.stdout + result.stderr
            times["verified"] = time.monotonic() - t0
        # a write node keeps no projection, and runs the admin calls on its partition state
        write_api = _api(conf[names[topo.nodes.index("write")]])
        assert _health(write_api)["projections"] == {}
        dry = httpx.post(f"{write_api}/v1/consolidate", json={}, timeout=60)
        assert dry.status_code == 200 and "reports" in dry.json(), dry.text
        api_node = _api(conf[names[topo.nodes.index("api")]])
        refused = httpx.post(f"{api_node}/v1/consolidate", json={}, timeout=10)
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "no_agents"
    finally:
        await tail.stop()
        _parallel(list(nodes.values()), "stop")
    print(", ".join(f"{k} {v:.1f}s" for k, v in times.items()))
    return times


async def test_write_project_and_api_nodes_split_the_work(
    settings: Settings, tmp_path: Path
) -> None:
    await _run(settings, tmp_path, Topology(("write", "project", "api"), kill=("write",)))


@pytest.mark.soak
@pytest.mark.skipif(os.environ.get("MEMSTREAM_SOAK") != "1", reason="long run: `make soak`")
async def test_two_write_one_project_two_api_nodes_one_of_each_killed(
    settings: Settings, tmp_path: Path
) -> None:
    topo = Topology(
        ("write", "write", "project", "api", "api"),
        kill=("write", "project", "api"),
        turns=400,
        verify=True,
    )
    await _run(settings, tmp_path, topo)
