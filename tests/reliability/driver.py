"""Crash-and-restart driver: a scripted workload while a worker is SIGKILLed and restarted.

Modelled on the Kafka Streams exactly-once system test: a driver publishes a long scripted
workload (the bundled conversations, repeated under fresh namespaces when more turns are
asked for than the set holds) in paced chunks, while the one worker that consumes it
(projections on: DuckDB and the embedded Qdrant under its data directory) is killed with
SIGKILL at seeded random moments and restarted on the same data directory. Most kills hit
a running worker (processing, extracting, writing projections); some hit it while it
starts (loading partition state, opening its stores, joining the group). Afterwards it
waits until every turn is covered by a ``TurnsExtracted`` event and the projections have
caught up, then checks:

* no turn lost: every published turn is covered, by exactly one extraction;
* no flush half-written: every extraction's facts each have their decision on the log;
* no memory created twice: one ``MemoryCreated`` per (namespace, content hash);
* the DuckDB ``turns`` table holds every turn exactly once;
* ``memstream verify`` finds the live projections identical to a clean rebuild from the
  log, asked of the running worker and again from the files after a clean stop.

The seed fixes the workload order, the kill moments and the downtimes; what the worker was
doing at each moment still depends on the machine, as in any crash test. Used by
``tests/integration/test_crash_restart.py`` (small in ``make test``, large in ``make soak``)
and runnable alone::

    python -m tests.reliability.driver --turns 600 --kills 4 --seed 7
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from aiokafka import AIOKafkaConsumer, TopicPartition

from bench.eval_data import load_conversations
from memstream.consumers.producer import AsyncProducer
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from memstream.schemas import decode
from memstream.schemas.envelope import Envelope
from memstream.schemas.topics import BY_ROLE
from memstream.streams.status import running_worker
from tests.harness import WorkerProcess, memstream, turn_from_row

#: the decision each extracted fact gets on the log (core/write_plan.py: one per fact)
DECISIONS = frozenset({"MemoryCreated", "MemoryUpdated", "MemoryReinforced", "DuplicateSkipped"})


@dataclass(frozen=True)
class CrashRun:
    turns: int = 300
    kills: int = 3
    seed: int = 0
    #: turns per publish; chunks are spread over ``publish_seconds``
    chunk: int = 20
    publish_seconds: float = 10.0
    #: a worker runs this long (uniform, seconds after it became ready) before its SIGKILL
    uptime: tuple[float, float] = (0.5, 3.0)
    #: and stays dead this long before the restart
    downtime: tuple[float, float] = (0.0, 1.0)
    #: the share of kills that hit a starting worker, this long (uniform) after its launch
    startup_kills: float = 0.0
    startup: tuple[float, float] = (0.5, 5.0)
    projections: str = "duckdb,qdrant"
    #: also run `memstream verify` against the running worker (it is always run after the
    #: clean stop, straight from the files)
    verify_running: bool = False
    #: seconds allowed for the end state (all turns covered, projections caught up)
    settle_timeout: float = 120.0


@dataclass
class Kill:
    at: float  # seconds since the run started
    uptime: float  # since it became ready, or since its launch when ``starting``
    downtime: float
    published: int  # turns acknowledged by the broker when the worker died
    starting: bool = False


@dataclass
class CrashReport:
    run: CrashRun
    published: int = 0
    kills: list[Kill] = field(default_factory=list)
    lost: list[tuple[str, str]] = field(default_factory=list)
    covered_twice: list[tuple[str, str]] = field(default_factory=list)
    created_twice: list[tuple[str, str]] = field(default_factory=list)
    incomplete_flushes: list[str] = field(default_factory=list)
    turns_rows: int = -1
    memory_events: int = 0
    repeated_records: int = 0  # records on the log whose event id came before (by design)
    orphan_decisions: int = 0  # decisions of a flush cut short by a SIGKILL (no TurnsExtracted)
    memories: int = 0
    verify_running: str = ""
    verify_stopped: str = ""
    verify_ok: bool = False
    seconds: dict[str, float] = field(default_factory=dict)

    def problems(self) -> list[str]:
        out = []
        if self.lost:
            out.append(f"{len(self.lost)} turns never extracted, e.g. {self.lost[:5]}")
        if self.covered_twice:
            out.append(
                f"{len(self.covered_twice)} turns in more than one extraction, e.g. {self.covered_twice[:5]}"
            )
        if self.created_twice:
            out.append(
                f"{len(self.created_twice)} memories created twice, e.g. {self.created_twice[:5]}"
            )
        if self.incomplete_flushes:
            out.append(
                f"{len(self.incomplete_flushes)} extractions miss fact decisions, e.g. {self.incomplete_flushes[:3]}"
            )
        if self.turns_rows != self.published:
            out.append(f"DuckDB turns table has {self.turns_rows} rows for {self.published} turns")
        if not self.verify_ok:
            out.append(
                "memstream verify found differences:\n"
                + self.verify_running
                + "\n"
                + self.verify_stopped
            )
        return out

    def summary(self) -> str:
        kills = ", ".join(
            f"{k.at:.1f}s ({'starting, ' if k.starting else ''}{k.published} published)"
            for k in self.kills
        )
        times = ", ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())
        return (
            f"{self.published} turns, {len(self.kills)} SIGKILLs at {kills or '-'}; "
            f"{self.memory_events} memory events ({self.repeated_records} repeated records, "
            f"{self.orphan_decisions} decisions of flushes cut short), "
            f"{self.memories} memories; {times}"
        )


def workload(n: int, settings: Settings) -> list[Envelope[Any]]:
    """``n`` turns: the bundled conversations interleaved round-robin by tenant (each
    tenant's turns stay in order), repeated under fresh namespaces (``<ns>-r<round>``)."""
    by_ns: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in load_conversations():
        by_ns[t["namespace"]].append(t)
    queues = list(by_ns.values())
    one_round: list[dict[str, Any]] = []
    for i in range(max(len(q) for q in queues)):
        one_round.extend(q[i] for q in queues if i < len(q))
    out: list[Envelope[Any]] = []
    for r in range(math.ceil(n / len(one_round))):
        for t in one_round:
            if len(out) == n:
                break
            out.append(
                turn_from_row(
                    t,
                    namespace=t["namespace"] if r == 0 else f"{t['namespace']}-r{r}",
                    producer="crash-driver",
                    settings=settings,
                )
            )
    return out


class LogTail:
    """Reads a topic from its start, incrementally: every call returns what is new."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap, self.topic = bootstrap, topic
        self.consumer: AIOKafkaConsumer | None = None
        self.ends: dict[int, int] = {}  # partition -> last offset read + 1

    async def start(self) -> LogTail:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap, enable_auto_commit=False, group_id=None
        )
        await consumer.start()
        parts = consumer.partitions_for_topic(self.topic) or set()
        if not parts:
            await consumer.force_metadata_update()
            parts = consumer.partitions_for_topic(self.topic) or set()
        tps = [TopicPartition(self.topic, p) for p in sorted(parts)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        self.consumer = consumer
        return self

    async def poll(self, idle: float = 0.3) -> list[Any]:
        assert self.consumer is not None
        out: list[Any] = []
        while True:
            batch = await self.consumer.getmany(timeout_ms=int(idle * 1000), max_records=5000)
            if not batch:
                return out
            for tp, records in batch.items():
                out.extend(records)
                self.ends[tp.partition] = records[-1].offset + 1

    async def stop(self) -> None:
        if self.consumer is not None:
            await self.consumer.stop()
            self.consumer = None


def _sql(api_url: str, query: str) -> list[list[Any]]:
    body = httpx.post(f"{api_url}/sql", json={"sql": query}, timeout=30).json()
    rows: list[list[Any]] = body["rows"]
    return rows


def _qdrant_digest(api_url: str, namespaces: list[str]) -> Any:
    return httpx.get(
        f"{api_url}/projections/digest",
        params={"namespaces": ",".join(namespaces)},
        timeout=120,
    ).json()


async def run_crash_restart(
    base: Settings, workdir: Path, run: CrashRun, log: Callable[[str], None] = print
) -> CrashReport:
    """Drive one run against the broker of ``base`` (its own topic prefix and data)."""
    t0 = time.monotonic()
    report = CrashReport(run)
    rng = random.Random(run.seed)
    own = base.with_(
        topic_prefix=f"mscrash{run.seed}x{rng.randrange(16**6):06x}",
        data_dir=str(workdir / "data"),
        projections=run.projections,
    )
    await ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions)
    envs = workload(run.turns, own)
    wanted = {(e.namespace, e.payload.turn_id) for e in envs}
    namespaces = sorted({ns for ns, _t in wanted})
    worker = WorkerProcess(own, workdir / "worker", projections=run.projections)
    published = 0
    tail = await LogTail(own.bootstrap(), BY_ROLE["memory_log"].name(own.topic_prefix)).start()
    records: list[Any] = []

    async def publish() -> None:
        nonlocal published
        chunks = [envs[i : i + run.chunk] for i in range(0, len(envs), run.chunk)]
        pause = run.publish_seconds / max(len(chunks), 1)
        async with AsyncProducer(own, producer_name="crash-driver") as producer:
            for chunk in chunks:
                await producer.publish_many(chunk)  # raises unless every turn was acked
                published += len(chunk)
                await asyncio.sleep(pause)

    async def kill(uptime: float, downtime: float, starting: bool) -> None:
        await asyncio.sleep(uptime)
        worker.kill()  # SIGKILL: no shutdown code runs, buffers and open files as they are
        report.kills.append(Kill(time.monotonic() - t0, uptime, downtime, published, starting))
        log(f"SIGKILL #{len(report.kills)} at {report.kills[-1].at:.1f}s")
        await asyncio.sleep(downtime)

    async def crash_loop() -> None:
        while len(report.kills) < run.kills:
            await kill(rng.uniform(*run.uptime), rng.uniform(*run.downtime), False)
            # sometimes the next incarnation dies too, while it starts
            while len(report.kills) < run.kills and rng.random() < run.startup_kills:
                worker.launch()
                await kill(rng.uniform(*run.startup), rng.uniform(*run.downtime), True)
            await asyncio.to_thread(worker.start, 90.0)

    try:
        await asyncio.to_thread(worker.start, 90.0)
        report.seconds["first start"] = time.monotonic() - t0
        async with asyncio.TaskGroup() as group:  # a failed publish cancels the kills
            group.create_task(publish())
            group.create_task(crash_loop())
        report.published = published
        report.seconds["publish+kills"] = time.monotonic() - t0
        info = running_worker(own.data_dir)
        assert info is not None, "the worker is not running after its last restart"
        api = str(info["api_url"])

        # 1. every turn covered by a TurnsExtracted event
        deadline = time.monotonic() + run.settle_timeout
        covered: Counter[tuple[str, str]] = Counter()
        seen_ids: set[str] = set()
        while True:
            for r in await tail.poll():
                records.append(r)
                env = decode(r.value)
                if env.type == "TurnsExtracted" and env.event_id not in seen_ids:
                    covered.update((env.namespace, t.turn_id) for t in env.payload.turns)
                seen_ids.add(env.event_id)
            if wanted <= set(covered) or time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
        report.seconds["covered"] = time.monotonic() - t0

        # 2. the projections caught up: DuckDB holds every memory-log event, the log stopped
        # growing, and the Qdrant digest is the same on two reads a second apart
        previous: Any = None
        while time.monotonic() < deadline:
            for r in await tail.poll():
                records.append(r)
                seen_ids.add(decode(r.value).event_id)
            in_duck = _sql(api, "SELECT count(*) FROM memory_log")[0][0]
            digest = await asyncio.to_thread(_qdrant_digest, api, namespaces)
            current = (len(records), in_duck, digest.get("qdrant"))
            if in_duck >= len(seen_ids) and current == previous:
                break
            previous = current
            await asyncio.sleep(1.0)
        report.seconds["caught up"] = time.monotonic() - t0
        report.turns_rows = _sql(api, "SELECT count(*) FROM turns")[0][0]

        running_ok = True
        if run.verify_running:
            result = await asyncio.to_thread(memstream, own, "verify", timeout=300)
            report.verify_running = (
                f"[worker running, exit {result.returncode}]\n{result.stdout}{result.stderr}"
            )
            running_ok = result.returncode == 0
        worker.stop()  # a clean stop; verify reads the live projections from their files
        result = await asyncio.to_thread(memstream, own, "verify", timeout=300)
        report.verify_stopped = (
            f"[worker stopped, exit {result.returncode}]\n{result.stdout}{result.stderr}"
        )
        report.verify_ok = running_ok and result.returncode == 0
        report.seconds["verified"] = time.monotonic() - t0
    finally:
        worker.stop()
        await tail.stop()

    _check_log(report, records, wanted)
    report.seconds["total"] = time.monotonic() - t0
    return report


def _check_log(report: CrashReport, records: list[Any], wanted: set[tuple[str, str]]) -> None:
    events: dict[str, Envelope[Any]] = {}
    for r in records:
        env = decode(r.value)
        if env.event_id in events:
            report.repeated_records += 1
        events.setdefault(env.event_id, env)
    report.memory_events = len(events)
    covered: Counter[tuple[str, str]] = Counter()
    decisions: Counter[str] = Counter()
    created: Counter[tuple[str, str]] = Counter()
    for env in events.values():
        if env.type == "TurnsExtracted":
            covered.update((env.namespace, t.turn_id) for t in env.payload.turns)
        elif env.type in DECISIONS and env.causation_id and env.producer == "write-path":
            decisions[env.causation_id] += 1
        if env.type == "MemoryCreated":
            created[(env.namespace, env.payload.content_hash)] += 1
    report.lost = sorted(wanted - set(covered))
    report.covered_twice = sorted(k for k, n in covered.items() if n > 1)
    report.created_twice = sorted(k for k, n in created.items() if n > 1)
    report.memories = len(created)
    heads = {e.event_id for e in events.values() if e.type == "TurnsExtracted"}
    report.orphan_decisions = sum(n for cause, n in decisions.items() if cause not in heads)
    for env in events.values():
        if env.type != "TurnsExtracted":
            continue
        # more than one decision per fact is possible: a crash in the middle of a flush leaves
        # some of them on the log without the TurnsExtracted record, which comes last, and
        # the turns are extracted again
        expected = env.payload.facts - len(env.payload.evidence.get("rejected_facts", []))
        if decisions[env.event_id] < expected:
            report.incomplete_flushes.append(
                f"{env.event_id} ({env.namespace}): {decisions[env.event_id]} of {expected} decisions"
            )


def main(argv: list[str] | None = None) -> int:
    """Run once on a broker of its own (the embedded one, memory storage)."""
    from memstream.infra.broker import EmbeddedBroker

    parser = argparse.ArgumentParser(prog="python -m tests.reliability.driver")
    parser.add_argument("--turns", type=int, default=CrashRun.turns)
    parser.add_argument("--kills", type=int, default=CrashRun.kills)
    parser.add_argument("--seed", type=int, default=CrashRun.seed)
    parser.add_argument("--publish-seconds", type=float, default=CrashRun.publish_seconds)
    parser.add_argument("--startup-kills", type=float, default=CrashRun.startup_kills)
    parser.add_argument("--verify-running", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the broker and data afterwards")
    args = parser.parse_args(argv)
    run = CrashRun(
        turns=args.turns,
        kills=args.kills,
        seed=args.seed,
        publish_seconds=args.publish_seconds,
        startup_kills=args.startup_kills,
        verify_running=args.verify_running,
    )
    with (
        tempfile.TemporaryDirectory(prefix="memstream-crash-") as tmp,
        EmbeddedBroker(log_path=Path(tmp) / "broker.log") as broker,
    ):
        base = Settings(kafka_bootstrap=broker.bootstrap, partitions=4, buffer_idle_seconds=1.0)
        report = asyncio.run(run_crash_restart(base, Path(tmp), run))
        print(report.summary())
        problems = report.problems()
        for p in problems:
            print("PROBLEM:", p)
        with contextlib.suppress(OSError):
            print((Path(tmp) / "worker" / "worker.log").read_text()[-2000:] if problems else "")
        if args.keep:
            print(f"kept: {tmp}, broker {broker.bootstrap}; press Enter to end", flush=True)
            sys.stdin.readline()
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
