"""Fault injection: the faults of issue 12 combined in one run, and what they did.

One embedded broker and one worker of its own (projections DuckDB, Qdrant and the archive).
Phase ``crashes``: a scripted workload (the bundled conversations) is published in paced
chunks while

* the worker is SIGKILLed at seeded moments and restarted on the same data directory;
* a recall runs every ``recall_every`` seconds (a steady read load through every restart);
* poison queries (stopword-only, once stalled the DuckDB projection after a restart) are
  asked just before a kill;
* a turn dated 9999 is written raw to the turns topic and offered to the HTTP API;
* feedback and edits name ids nobody has (HTTP: must be 404) and raw feedback names an
  unknown query id on the topic (must not hold up another tenant's edit).

Phase ``broker restart``: the embedded broker (memory storage) is stopped and started, so
every topic comes back empty, as after losing a broker's storage; health is asked while it
is down and after; the worker is restarted (as a supervisor would) after ``recover`` (a
``memstream`` command, if given) and new turns plus a producer's retry of old ones are
published.

Reported per phase, the four numbers of the issue, each with its evidence:

* turns lost: an acknowledged turn not in any ``TurnsExtracted`` on the log, or missing from
  the DuckDB ``turns`` table at the end;
* duplicate memories: more than one ``MemoryCreated`` for a (namespace, content hash) on the
  log, or more than one active memory for it in DuckDB;
* projections stalled: a projection (DuckDB, Qdrant, archive) whose applied position is
  behind the memory log's end when everything else has settled;
* health wrong: ``/health`` says "ok" while the broker is down, while the worker's read
  positions are past the end of a recreated log, or while a projection is stalled; or it
  says "degraded" at a settled end for a reason other than dead letters.

``other`` lists what fits none of these (an edge answer that should have been an error, a
9999 event that reached the log, an edit held up by unknown ids, a 500 from recall).

Used by ``tests/integration/test_faults.py`` (small, in ``make test``) and ``make faults``::

    python -m tests.reliability.faults --turns 1200 --kills 6 --seed 3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from aiokafka import AIOKafkaProducer

from memstream.consumers.producer import AsyncProducer
from memstream.infra.broker import EmbeddedBroker
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.envelope import Envelope, encode, make_event, record_headers
from memstream.schemas.events import ConversationTurn, Feedback
from memstream.schemas.topics import BY_ROLE
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess, memstream
from tests.reliability.driver import LogTail, workload

NUMBERS = ("turns_lost", "duplicate_memories", "projections_stalled", "health_wrong")
POISON_QUERIES = ("where", "the the", "what is it?")
RECALL_QUERIES = ("what does she prefer?", "where does he live?", "which job did they decide on?")
FAR_FUTURE = datetime(9999, 12, 31, tzinfo=UTC)


@dataclass(frozen=True)
class FaultRun:
    turns: int = 240
    kills: int = 2
    seed: int = 0
    chunk: int = 20
    publish_seconds: float = 16.0
    #: seconds a worker runs after it became ready before its SIGKILL (uniform)
    uptime: tuple[float, float] = (2.0, 5.0)
    recall_every: float = 0.2
    broker_restart: bool = True
    after_restart_turns: int = 40
    #: turns of the first phase published again after the broker restart (a producer's retry)
    resent_turns: int = 20
    #: a ``memstream`` command (its arguments) run with the worker stopped after the broker
    #: restart, e.g. ("replay", "--projection", "all", "--from-archive"); none: just restart
    recover: tuple[str, ...] = ()
    settle_timeout: float = 45.0
    #: after the broker restart: a projection off the log's end this long is stalled
    stall_after: float = 20.0
    #: an edit must be applied this soon after raw feedback naming unknown ids
    edit_within: float = 15.0
    projections: str = "duckdb,qdrant,archive"


@dataclass
class PhaseReport:
    name: str
    turns_lost: list[str] = field(default_factory=list)
    duplicate_memories: list[str] = field(default_factory=list)
    projections_stalled: list[str] = field(default_factory=list)
    health_wrong: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def numbers(self) -> dict[str, int]:
        return {n: len(getattr(self, n)) for n in NUMBERS}

    def clean(self) -> bool:
        return not any(self.numbers().values()) and not self.other

    def describe(self) -> str:
        nums = ", ".join(f"{n.replace('_', ' ')} {v}" for n, v in self.numbers().items())
        lines = [f"[{self.name}] {nums}; other {len(self.other)}"]
        for n in (*NUMBERS, "other"):
            lines.extend(f"  {n}: {item}" for item in getattr(self, n)[:5])
        lines.extend(f"  note: {item}" for item in self.notes)
        return "\n".join(lines)


@dataclass
class FaultReport:
    run: FaultRun
    phases: list[PhaseReport] = field(default_factory=list)
    kills: int = 0
    recalls: Counter[str] = field(default_factory=Counter)
    seconds: dict[str, float] = field(default_factory=dict)

    def phase(self, name: str) -> PhaseReport:
        return next(p for p in self.phases if p.name == name)

    def totals(self) -> dict[str, int]:
        out = dict.fromkeys(NUMBERS, 0)
        for p in self.phases:
            for n, v in p.numbers().items():
                out[n] += v
        return out

    def describe(self) -> str:
        times = ", ".join(f"{k} {v:.0f}s" for k, v in self.seconds.items())
        head = (
            f"faults run (seed {self.run.seed}): {self.kills} SIGKILLs, recalls "
            f"{dict(self.recalls)}; totals {self.totals()}; {times}"
        )
        return "\n".join([head, *(p.describe() for p in self.phases)])


class Api:
    """The running worker's HTTP API, found through its data directory."""

    def __init__(self, data_dir: str) -> None:
        self.data_dir = data_dir
        self.http = httpx.AsyncClient(timeout=10.0)

    def url(self) -> str | None:
        info = running_worker(self.data_dir)
        return str(info["api_url"]) if info else None

    async def call(self, method: str, path: str, **kw: Any) -> httpx.Response | None:
        """One request; None when no worker runs or it does not answer."""
        url = self.url()
        if url is None:
            return None
        try:
            return await self.http.request(method, f"{url}{path}", **kw)
        except httpx.HTTPError:
            return None

    async def until(self, method: str, path: str, timeout: float = 60.0, **kw: Any) -> Any:
        """Retry across restarts until the worker answers (any status)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = await self.call(method, path, **kw)
            if r is not None:
                return r
            await asyncio.sleep(0.5)
        raise TimeoutError(f"no worker answered {method} {path} within {timeout:.0f}s")

    async def sql(self, query: str, params: list[Any] | None = None) -> list[list[Any]]:
        r = await self.until("POST", "/sql", json={"sql": query, "params": params or None})
        body = r.json()
        if r.status_code != 200:
            raise RuntimeError(f"SQL failed ({r.status_code}): {body}")
        rows: list[list[Any]] = body["rows"]
        return rows

    async def health(self) -> dict[str, Any] | None:
        r = await self.call("GET", "/health")
        if r is None or r.status_code != 200:
            return None
        data: dict[str, Any] = r.json()
        return data

    async def close(self) -> None:
        await self.http.aclose()


async def _recall_load(
    api: Api, namespace: str, every: float, stop: asyncio.Event, out: Counter[str]
) -> None:
    i = 0
    while not stop.is_set():
        i += 1
        r = await api.call(
            "POST",
            "/v1/recall",
            json={"namespace": namespace, "query": RECALL_QUERIES[i % len(RECALL_QUERIES)]},
        )
        out["unreachable" if r is None else str(r.status_code)] += 1
        await asyncio.sleep(every)


def _expect(phase: PhaseReport, what: str, r: httpx.Response, status: int) -> None:
    if r.status_code != status:
        phase.other.append(f"{what}: HTTP {r.status_code} (expected {status}): {r.text[:200]}")


async def _edge_faults(api: Api, namespace: str, phase: PhaseReport) -> None:
    """Unknown ids and a date in 9999 offered to the HTTP API: each must be refused."""
    r = await api.until(
        "POST",
        "/v1/memories",
        json={
            "namespace": namespace,
            "messages": "I moved to Lisbon.",
            "occurred_at": FAR_FUTURE.isoformat(),
        },
    )
    _expect(phase, "turn dated 9999 through HTTP", r, 422)
    r = await api.until(
        "POST",
        "/v1/feedback",
        json={"namespace": namespace, "query_id": f"q-{uuid.uuid4().hex}", "outcome": "positive"},
    )
    _expect(phase, "feedback naming an unknown query id", r, 404)
    r = await api.until(
        "PUT",
        f"/v1/memories/m-{uuid.uuid4().hex}",
        params={"namespace": namespace},
        json={"text": "nobody has this memory"},
    )
    _expect(phase, "edit of an unknown memory", r, 404)


async def _raw_faults(s: Settings, namespace: str, future_turn: str) -> None:
    """What a producer that skips the SDK's checks may write: a turn dated 9999 and
    feedback naming query ids nobody asked."""
    producer = AIOKafkaProducer(bootstrap_servers=s.bootstrap(), acks="all")
    await producer.start()
    try:
        envs: list[Envelope[Any]] = [
            make_event(
                ConversationTurn(
                    turn_id=future_turn, role="user", speaker="Mallory", text="I will live on Mars."
                ),
                namespace=namespace,
                session_id="far-future",
                occurred_at=FAR_FUTURE,
                producer="faults",
            )
        ]
        envs += [
            make_event(
                Feedback(query_id=f"q-unknown-{i}-{uuid.uuid4().hex[:8]}", outcome="positive"),
                namespace=namespace,
                producer="faults",
            )
            for i in range(3)
        ]
        for env in envs:
            topic = (
                BY_ROLE["turns"] if env.type == "ConversationTurn" else BY_ROLE["feedback"]
            ).name(s.topic_prefix)
            await producer.send_and_wait(
                topic, encode(env), key=env.key, headers=record_headers(env)
            )
    finally:
        await producer.stop()


async def _edit_lands(api: Api, namespace: str, within: float, phase: PhaseReport) -> None:
    """Another tenant's edit, right after the unknown-id feedback: applied within a bound."""
    rows = await api.sql(
        "SELECT memory_id FROM memories WHERE namespace = ? AND status = 'active' ORDER BY memory_id LIMIT 1",
        [namespace],
    )
    if not rows:
        phase.notes.append(f"no active memory in {namespace} to edit")
        return
    memory_id, text = rows[0][0], f"edited by the faults driver {uuid.uuid4().hex[:6]}"
    r = await api.until(
        "PUT", f"/v1/memories/{memory_id}", params={"namespace": namespace}, json={"text": text}
    )
    _expect(phase, "edit of a real memory", r, 200)
    started = time.monotonic()
    while time.monotonic() - started < within + 30:
        found = await api.sql(
            "SELECT text FROM memories WHERE namespace = ? AND memory_id = ?",
            [namespace, memory_id],
        )
        if found and found[0][0] == text:
            took = time.monotonic() - started
            phase.notes.append(f"an edit after unknown-id feedback applied in {took:.1f}s")
            if took > within:
                phase.other.append(
                    f"an edit took {took:.0f}s to apply after unknown-id feedback (bound {within:.0f}s)"
                )
            return
        await asyncio.sleep(0.5)
    phase.other.append(
        f"an edit was not applied within {within + 30:.0f}s after unknown-id feedback"
    )


async def _settle(
    api: Api,
    tail: LogTail,
    records: list[Any],
    wanted: set[tuple[str, str]],
    timeout: float,
) -> set[tuple[str, str]]:
    """Read the memory log until every wanted turn is covered (or the time is up)."""
    covered: set[tuple[str, str]] = set()
    deadline = time.monotonic() + timeout
    while True:
        for r in await tail.poll():
            records.append(r)
            env = decode(r.value)
            if env.type == "TurnsExtracted":
                covered.update((env.namespace, t.turn_id) for t in env.payload.turns)
        if wanted <= covered or time.monotonic() > deadline:
            return covered
        await asyncio.sleep(1.0)


async def _projections_caught_up(
    api: Api, tail: LogTail, records: list[Any], memory_topic: str, partitions: int, timeout: float
) -> tuple[dict[str, list[str]], dict[str, Any] | None]:
    """Wait until every projection applied the memory log exactly to its end; what is off
    after the time is up (behind, or past the end of a recreated log), and the health then."""
    deadline = time.monotonic() + timeout
    behind: dict[str, list[str]] = {}
    health: dict[str, Any] | None = None
    while True:
        records.extend(await tail.poll())
        health = await api.health()
        positions = (health or {}).get("positions") or {}
        behind = {}
        for kind, applied in positions.items():
            off = []
            for p in range(partitions):
                at, end = applied.get(f"{memory_topic}/{p}", 0), tail.ends.get(p, 0)
                if at != end:
                    where = "behind" if at < end else "past the end of"
                    off.append(f"{memory_topic}/{p}: at {at}, {where} the log's {end}")
            if off:
                behind[kind] = off
        if health is not None and positions and not behind:
            return {}, health
        if time.monotonic() > deadline:
            if health is None:
                behind = {"all": ["the worker's /health did not answer"]}
            return behind, health
        await asyncio.sleep(1.0)


def _recall_errors(phase: PhaseReport, now: Counter[str], before: Counter[str]) -> None:
    """Recalls of the load that failed on the worker's side during the phase (a refusal
    with 429, or no worker while it restarts, is an answer, not an error)."""
    for status, n in sorted((now - before).items()):
        if status.startswith("5") and status != "503":
            phase.other.append(f"{n} recall(s) of the steady load answered HTTP {status}")
    phase.notes.append(f"steady recall load: {dict(now - before)}")


def _check_health(
    phase: PhaseReport, health: dict[str, Any] | None, stalled: bool, when: str
) -> None:
    if health is None:
        phase.health_wrong.append(f"{when}: /health did not answer")
        return
    status, problems = health.get("status"), health.get("problems") or []
    if stalled and status == "ok":
        phase.health_wrong.append(f"{when}: 'ok' while a projection is stalled")
    if not stalled and status != "ok" and not all("dead-letter" in p for p in problems):
        phase.health_wrong.append(f"{when}: {status!r} with nothing wrong: {problems}")


async def _duplicates(
    api: Api, records: list[Any], phase: PhaseReport, namespaces: list[str]
) -> None:
    created: Counter[tuple[str, str]] = Counter()
    seen: set[str] = set()
    for r in records:
        env = decode(r.value)
        if env.event_id in seen:
            continue
        seen.add(env.event_id)
        if env.type == "MemoryCreated":
            created[(env.namespace, env.payload.content_hash)] += 1
    phase.duplicate_memories.extend(
        f"{ns}: {n} MemoryCreated for content {h[:12]}" for (ns, h), n in created.items() if n > 1
    )
    rows = await api.sql(
        "SELECT namespace, content_hash, count(*) FROM memories WHERE status = 'active' "
        "AND namespace IN (SELECT unnest(?::VARCHAR[])) GROUP BY ALL HAVING count(*) > 1",
        [namespaces],
    )
    phase.duplicate_memories.extend(
        f"{ns}: {n} active memories for content {h[:12]} in DuckDB" for ns, h, n in rows
    )


async def _turns_in_duckdb(api: Api, wanted: set[tuple[str, str]]) -> set[tuple[str, str]]:
    namespaces = sorted({ns for ns, _t in wanted})
    rows = await api.sql(
        "SELECT DISTINCT namespace, turn_id FROM turns WHERE namespace IN (SELECT unnest(?::VARCHAR[]))",
        [namespaces],
    )
    return {(ns, t) for ns, t in rows}


async def _log_far_future(records: list[Any], future_turn: str, phase: PhaseReport) -> None:
    for r in records:
        env = decode(r.value)
        if env.occurred_at.year > 3000:
            phase.other.append(f"{env.type} dated {env.occurred_at.date()} reached the memory log")
            return
        if env.type == "TurnsExtracted" and any(
            t.turn_id == future_turn for t in env.payload.turns
        ):
            phase.other.append("the turn dated 9999 was extracted")
            return


async def run_faults(
    workdir: Path, run: FaultRun, log: Callable[[str], None] = print
) -> FaultReport:
    t0 = time.monotonic()
    rng = random.Random(run.seed)
    report = FaultReport(run)
    broker = EmbeddedBroker(log_path=workdir / "broker.log").start()
    s = Settings(
        kafka_bootstrap=broker.bootstrap,
        topic_prefix=f"msfaults{run.seed}",
        data_dir=str(workdir / "data"),
        partitions=4,
        buffer_idle_seconds=1.0,
        projections=run.projections,
    )
    memory_topic = BY_ROLE["memory_log"].name(s.topic_prefix)
    api = Api(s.data_dir)
    worker = WorkerProcess(s, workdir / "worker", projections=run.projections)
    stop_load = asyncio.Event()
    tail: LogTail | None = None
    tasks: list[asyncio.Task[Any]] = []
    try:
        await ensure_topics(s.bootstrap(), s.topic_prefix, s.partitions)
        envs = workload(run.turns, s)
        namespaces = sorted({e.namespace for e in envs})
        wanted = {(e.namespace, e.payload.turn_id) for e in envs}
        future_turn = f"t-future-{run.seed}"
        tail = await LogTail(s.bootstrap(), memory_topic).start()
        records: list[Any] = []
        await asyncio.to_thread(worker.start, 90.0)
        report.seconds["first start"] = time.monotonic() - t0
        tasks.append(
            asyncio.ensure_future(
                _recall_load(api, namespaces[0], run.recall_every, stop_load, report.recalls)
            )
        )

        # --- phase 1: SIGKILLs, poison queries, steady recalls, bad dates, unknown ids ------
        crashes = PhaseReport("crashes")
        report.phases.append(crashes)
        recalls_at = Counter(report.recalls)
        published = 0

        async def publish() -> None:
            nonlocal published
            chunks = [envs[i : i + run.chunk] for i in range(0, len(envs), run.chunk)]
            pause = run.publish_seconds / max(len(chunks), 1)
            async with AsyncProducer(s, producer_name="faults") as producer:
                for i, chunk in enumerate(chunks):
                    await producer.publish_many(chunk)
                    published += len(chunk)
                    if i == len(chunks) // 3:
                        await _raw_faults(s, namespaces[-1], future_turn)
                    await asyncio.sleep(pause)

        async def crash_loop() -> None:
            for k in range(run.kills):
                await asyncio.sleep(rng.uniform(*run.uptime))
                for q in POISON_QUERIES if k == 0 else ():  # asked, then the worker dies
                    r = await api.call(
                        "POST",
                        "/v1/recall",
                        json={"namespace": namespaces[k % len(namespaces)], "query": q},
                    )
                    if r is not None and r.status_code >= 500:
                        crashes.other.append(f"poison query {q!r}: HTTP {r.status_code}")
                worker.kill()
                report.kills += 1
                log(
                    f"SIGKILL #{report.kills} at {time.monotonic() - t0:.1f}s ({published} published)"
                )
                await asyncio.sleep(rng.uniform(0.0, 1.0))
                await asyncio.to_thread(worker.start, 90.0)

        async with asyncio.TaskGroup() as group:
            group.create_task(publish())
            group.create_task(crash_loop())
        report.seconds["published"] = time.monotonic() - t0
        await _edge_faults(api, namespaces[-1], crashes)
        covered = await _settle(api, tail, records, wanted, run.settle_timeout)
        await _edit_lands(api, namespaces[0], run.edit_within, crashes)
        behind, health = await _projections_caught_up(
            api, tail, records, memory_topic, s.partitions, run.settle_timeout
        )
        report.seconds["settled"] = time.monotonic() - t0
        in_duck = await _turns_in_duckdb(api, wanted)
        crashes.turns_lost.extend(
            f"{ns}/{t}: never extracted" for ns, t in sorted(wanted - covered)
        )
        crashes.turns_lost.extend(
            f"{ns}/{t}: not in DuckDB turns" for ns, t in sorted(wanted - in_duck)
        )
        crashes.projections_stalled.extend(f"{k}: {', '.join(v)}" for k, v in behind.items())
        _check_health(crashes, health, bool(behind), "settled after the crashes")
        await _duplicates(api, records, crashes, namespaces)
        await _log_far_future(records, future_turn, crashes)
        searches = await api.sql(
            "SELECT count(*) FROM searches WHERE query IN (SELECT unnest(?::VARCHAR[]))",
            [list(POISON_QUERIES)],
        )
        crashes.notes.append(f"poison queries in DuckDB searches: {searches[0][0]}")
        _recall_errors(crashes, report.recalls, recalls_at)
        recalls_at = Counter(report.recalls)
        log(crashes.describe())

        # --- phase 2: the broker restarts empty -------------------------------------------
        if run.broker_restart:
            restart = PhaseReport("broker restart")
            report.phases.append(restart)
            records_before = list(records)
            await tail.stop()
            tail = None
            broker.stop()
            await asyncio.sleep(2.0)
            down = [await api.health() for _ in range(3)]
            if any(h is not None and h.get("status") == "ok" for h in down):
                restart.health_wrong.append("'ok' while the broker is down")
            broker.start()  # same address, memory storage: every topic is gone
            await ensure_topics(
                s.bootstrap(), s.topic_prefix, s.partitions
            )  # the operator's `topics create`
            await asyncio.sleep(3.0)
            after = await api.health()
            ahead = any(
                v > 0
                for pos in ((after or {}).get("positions") or {}).values()
                for v in pos.values()
            )
            if after is not None and after.get("status") == "ok" and ahead:
                restart.health_wrong.append(
                    "'ok' while the read positions are past the end of the recreated log"
                )
            await asyncio.to_thread(worker.stop)
            report.seconds["broker restarted, worker stopped"] = time.monotonic() - t0
            if run.recover:
                out = await asyncio.to_thread(memstream, s, *run.recover, timeout=300)
                restart.notes.append(
                    f"recover `memstream {' '.join(run.recover)}`: exit {out.returncode} {out.stderr[-300:]}"
                )
            tail = await LogTail(s.bootstrap(), memory_topic).start()
            records = []
            try:
                await asyncio.to_thread(worker.start, 120.0)
            except AssertionError as e:  # it may refuse to run on a log it does not recognise
                restart.other.append(
                    f"the worker did not start after the broker restart "
                    f"({'; '.join(restart.notes)}): {str(e)[-3000:]}"
                )
                log(restart.describe())
                return report  # nothing more to measure without a worker; the report says why
            report.seconds["worker restarted"] = time.monotonic() - t0
            new = workload(run.turns + run.after_restart_turns, s)[run.turns :]
            resent = envs[-run.resent_turns :] if run.resent_turns else []
            async with AsyncProducer(s, producer_name="faults") as producer:
                await producer.publish_many([*new, *resent])
            wanted2 = {(e.namespace, e.payload.turn_id) for e in new}
            covered2 = await _settle(api, tail, records, wanted2, run.settle_timeout)
            behind2, health2 = await _projections_caught_up(
                api,
                tail,
                records,
                memory_topic,
                s.partitions,
                min(run.settle_timeout, run.stall_after),
            )
            in_duck2 = await _turns_in_duckdb(api, wanted | wanted2)
            restart.turns_lost.extend(
                f"{ns}/{t}: never extracted after the restart"
                for ns, t in sorted(wanted2 - covered2)
            )
            restart.turns_lost.extend(
                f"{ns}/{t}: not in DuckDB turns at the end"
                for ns, t in sorted((wanted | wanted2) - in_duck2)
            )
            restart.projections_stalled.extend(f"{k}: {', '.join(v)}" for k, v in behind2.items())
            _check_health(restart, health2, bool(behind2), "settled after the broker restart")
            await _duplicates(
                api,
                [*records_before, *records],
                restart,
                sorted({ns for ns, _ in wanted | wanted2}),
            )
            _recall_errors(restart, report.recalls, recalls_at)
            restart.duplicate_memories[:] = [
                d for d in restart.duplicate_memories if d not in crashes.duplicate_memories
            ]
            log(restart.describe())
        report.seconds["total"] = time.monotonic() - t0
        return report
    finally:
        stop_load.set()
        for task in tasks:
            with contextlib.suppress(Exception):
                await task
        await asyncio.to_thread(worker.stop)
        if tail is not None:
            with contextlib.suppress(Exception):
                await tail.stop()
        await api.close()
        broker.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reliability.faults")
    env = os.environ.get
    parser.add_argument("--turns", type=int, default=int(env("FAULTS_TURNS", "1200")))
    parser.add_argument("--kills", type=int, default=int(env("FAULTS_KILLS", "6")))
    parser.add_argument("--seed", type=int, default=int(env("FAULTS_SEED", "1")))
    parser.add_argument(
        "--publish-seconds", type=float, default=float(env("FAULTS_PUBLISH_SECONDS", "60"))
    )
    parser.add_argument("--no-broker-restart", action="store_true")
    parser.add_argument(
        "--recover",
        default=env("FAULTS_RECOVER", "recover"),
        help="a memstream command run after the broker restart",
    )
    args = parser.parse_args(argv)
    run = FaultRun(
        turns=args.turns,
        kills=args.kills,
        seed=args.seed,
        publish_seconds=args.publish_seconds,
        uptime=(3.0, max(4.0, args.publish_seconds / max(args.kills, 1) - 8.0)),
        broker_restart=not args.no_broker_restart,
        after_restart_turns=max(40, args.turns // 10),
        resent_turns=max(20, args.turns // 20),
        recover=tuple(args.recover.split()),
        settle_timeout=120.0,
    )
    with tempfile.TemporaryDirectory(prefix="memstream-faults-") as tmp:
        report = asyncio.run(run_faults(Path(tmp), run))
    print(report.describe())
    return 0 if all(p.clean() for p in report.phases) else 1


if __name__ == "__main__":
    raise SystemExit(main())
