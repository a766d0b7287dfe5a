"""`memstream mcp` driven by the MCP SDK's own client, over stdio and streamable HTTP, against
a real worker and broker: every tool, the resources, bad arguments, and key scoping (a key for
one namespace never reaches another)."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx2
import orjson
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from tests.harness import ROOT, WorkerProcess, settings_env

T0 = datetime(2024, 4, 1, 9, tzinfo=UTC)
TOOLS = {
    "add_memory",
    "search_memories",
    "recall",
    "get_memory",
    "get_memories",
    "update_memory",
    "delete_memory",
    "memory_history",
    "feedback",
    "observe_workflow",
    "workflow_health",
    "gaps",
    "audit",
    "consolidate",
    "context",
    "graph",
    "entity",
    "tree",
}
FACTS = ["I live in Lisbon.", "My favorite food is ramen.", "We decided to adopt Kafka."]


class Keyed:
    """A worker with API keys: ka reaches only `a`, kb only `b`, root every namespace."""

    def __init__(self, settings: Settings, a: str, b: str) -> None:
        self.settings, self.a, self.b = settings, a, b


@pytest.fixture(scope="module")
def keyed(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keyed]:
    base = tmp_path_factory.mktemp("mcp")
    own = settings.with_(topic_prefix="msmcp", data_dir=str(base / "data"))
    asyncio.run(ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions))
    suffix = random.randrange(10**8)
    a, b = f"mcp-a-{suffix}", f"mcp-b-{suffix}"
    worker = WorkerProcess(
        own, base / "w", api_keys=f"ka={a},kb={b},root=*", dream_every_hours="0"
    ).start()
    yield Keyed(own, a, b)
    worker.stop()


def stdio(k: Keyed, **env: str) -> Client:
    return Client(
        StdioServerParameters(
            command=sys.executable,
            args=["-m", "memstream.consumers.cli", "mcp"],
            env=settings_env(k.settings, **env),
            cwd=str(ROOT),
        )
    )


@pytest.fixture(scope="module")
def http_url(keyed: Keyed) -> Iterator[str]:
    """`memstream mcp --transport http` on a free port, serving whoever presents a key."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memstream.consumers.cli",
            "mcp",
            "--transport",
            "http",
            "--port",
            "0",
        ],
        env=settings_env(keyed.settings),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "streamable HTTP on " in line, line
    yield line.rsplit(" ", 1)[1].strip()
    proc.terminate()
    proc.wait(20)


def http(url: str, key: str | None) -> Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers)))


@asynccontextmanager
async def connected(client: Client) -> AsyncIterator[Client]:
    async with client as c:
        yield c


async def call(c: Client, name: str, **args: Any) -> dict[str, Any]:
    result = await c.call_tool(name, args)
    assert not result.is_error, (name, result.content)
    out: dict[str, Any] = result.structured_content
    return out


async def refused(c: Client, name: str, **args: Any) -> str:
    result = await c.call_tool(name, args)
    assert result.is_error, (name, result.structured_content)
    return str(result.content[0].text)  # type: ignore[union-attr]


async def eventually(
    fn: Callable[[], Awaitable[Any]], ok: Callable[[Any], bool], timeout: float = 30.0
) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await fn()
        if ok(value) or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.3)


async def tour(c: Client, ns: str) -> None:
    """Every tool once, each checked against what the worker did (the namespace is implied:
    the server's configuration over stdio, the key's single namespace over HTTP)."""
    listed = {t.name: t for t in (await c.list_tools()).tools}
    assert set(listed) >= TOOLS
    assert all(listed[n].input_schema["type"] == "object" for n in TOOLS)
    assert listed["consolidate"].input_schema["properties"]["apply"]["default"] is False

    for text in FACTS:
        added = await call(c, "add_memory", text=text, session_id="s1", occurred_at=T0.isoformat())
        assert added["namespace"] == ns and added["results"][0]["status"] == "queued"

    async def memories() -> list[dict[str, Any]]:
        return list((await call(c, "get_memories", status="active"))["results"])

    rows = await eventually(memories, lambda rs: len(rs) >= 3)
    assert len(rows) >= 3 and all(r["namespace"] == ns for r in rows)

    async def where() -> Any:
        return await call(c, "search_memories", query="where do I live?", limit=3)

    # listing reads the analytics projection, search the retrieval one: each applies the
    # memory log at its own pace (README, Known gaps), so search is waited for too
    found = await eventually(where, lambda f: bool(f["results"]))
    assert "Lisbon" in found["results"][0]["memory"], found

    answer = await call(c, "recall", query="what food do I like?", k=3)
    top = answer["results"][0]
    assert "ramen" in top["text"] and "relevance" in top["why"] and top["explain"]
    assert top["source_turn_ids"]
    off = "What is the capital gains tax rate on cryptocurrency?"
    held = await call(c, "recall", query=off, k=3)
    assert held["confidence"] == "skipped" and held["results"] == [], held
    given = await call(c, "recall", query=off, k=3, include_low_confidence=True)
    assert given["confidence"] == "skipped" and given["results"], given
    fed = await call(c, "feedback", query_id=answer["query_id"], outcome="positive")
    assert fed["status"] == "queued"
    mid = top["memory_id"]
    before = (await call(c, "get_memory", memory_id=mid))["q_value"]

    async def memory() -> dict[str, Any]:
        return await call(c, "get_memory", memory_id=mid)

    assert (await eventually(memory, lambda m: m["q_value"] > before))["q_value"] > before

    await call(c, "update_memory", memory_id=mid, text="My favorite food is spicy ramen.")
    assert "spicy" in (await eventually(memory, lambda m: "spicy" in m["text"]))["text"]
    kinds = [e["type"] for e in (await call(c, "memory_history", memory_id=mid))["events"]]
    assert kinds[0] == "MemoryCreated" and {"QValueUpdated", "MemoryUpdated"} <= set(kinds)

    near = await call(c, "graph", memory_id=mid, hops=1)
    assert mid in {n["memory_id"] for n in near["nodes"]} and "edges" in near
    assert "entities" in await call(c, "entity")
    tree = await call(c, "tree")
    assert tree["namespace"] == ns and any(n["count"] for n in tree["nodes"]), tree
    added = await call(c, "tree", action="add", path="food/ramen")
    assert added["action"] == "add" and added["status"] == "queued"

    trail = await call(c, "audit", memory_id=mid)
    assert {"source_turn", "created", "q_value"} <= {s["kind"] for s in trail["steps"]}
    known = await call(c, "audit", as_of=datetime.now(UTC).isoformat())
    assert any("Lisbon" in m["text"] for m in known["memories"])

    for outcome in ("failure", "failure", "success"):
        await call(c, "observe_workflow", workflow="deploy", outcome=outcome, detail="tests red")

    async def health() -> list[dict[str, Any]]:
        result = await c.call_tool("workflow_health", {"workflow": "deploy"})
        # until the first observation is projected: "no observations of workflow 'deploy'"
        return [] if result.is_error else list(result.structured_content["workflows"])

    (deploy,) = await eventually(
        health, lambda ws: bool(ws) and (ws[0]["failure_7d"], ws[0]["success_7d"]) == (2, 1)
    )
    assert deploy["status"] == "degraded" and len(deploy["evidence"]) == 2
    assert deploy["suggestions"]

    for q in ("how do I rotate TLS certificates?", "rotate TLS certificates", "TLS certificates"):
        await call(c, "recall", query=q)

    async def gap_topics() -> list[str]:
        return [g["topic"] for g in (await call(c, "gaps", days=30))["gaps"]]

    def certificates(topics: list[str]) -> bool:
        return any("certific" in t for t in topics)  # topics are stemmed

    # asked three times, never answered
    assert certificates(await eventually(gap_topics, certificates)), await gap_topics()

    plan = await call(c, "consolidate")
    assert plan["mode"].startswith("dry run") and all(not r["applied"] for r in plan["reports"])

    block = await call(c, "context", query="where do I live?", budget=400)
    assert "Lisbon" in block["text"] and block["query_id"] and block["memory_ids"]
    assert block["tokens"] <= 400

    md = await c.read_resource(f"memstream://{ns}/MEMORY.md")
    hot = md.contents[0].text  # type: ignore[union-attr]
    assert hot.startswith(f"# Memory of {ns}") and "Lisbon" in hot  # the worker's hot memory
    report = await c.read_resource(f"memstream://{ns}/gaps")
    assert orjson.loads(report.contents[0].text)["namespace"] == ns  # type: ignore[union-attr]

    await call(c, "delete_memory", memory_id=mid, reason="no longer true")

    async def gone() -> str:
        result = await c.call_tool("get_memory", {"memory_id": mid})
        return str(result.content[0].text) if result.is_error else "still there"  # type: ignore[union-attr]

    assert "deleted" in await eventually(gone, lambda m: "deleted" in m)


async def test_stdio_every_tool_and_clear_errors(keyed: Keyed) -> None:
    async with connected(stdio(keyed, mcp_namespace=keyed.a, mcp_api_key="ka")) as c:
        await tour(c, keyed.a)

        # bad arguments: each error names what is wrong
        assert "query" in await refused(c, "recall", k=3)
        assert "k\n" in await refused(c, "recall", query="x", k=0)
        assert "outcome" in await refused(c, "observe_workflow", workflow="w", outcome="meh")
        assert "memory_id" in await refused(c, "get_memory", memory_id="../sql")
        assert "exactly one" in await refused(c, "audit")
        assert "missing_outcome" in await refused(c, "feedback", memory_ids=["m1"])
        assert "occurred_at" in await refused(c, "add_memory", text="x", occurred_at="yesterday")
        # a time UTC cannot hold: the HTTP door's clear error, not an internal one
        assert "as_of" in await refused(c, "audit", as_of="0001-01-01T00:00:00+14:00")
        assert "not_found" in await refused(c, "get_memory", memory_id="no-such-memory")
        # the configured namespace is the only one this server serves
        assert "serves namespace" in await refused(c, "get_memories", namespace=keyed.b)


async def test_http_every_tool_with_the_callers_key(keyed: Keyed, http_url: str) -> None:
    async with connected(http(http_url, "kb")) as c:
        await tour(c, keyed.b)


async def test_http_key_scoped_to_one_namespace_never_reaches_another(
    keyed: Keyed, http_url: str
) -> None:
    async with connected(http(http_url, "ka")) as c:
        for name, args in [
            ("get_memories", {}),
            ("recall", {"query": "where do I live?"}),
            ("add_memory", {"text": "I moved to Porto."}),
            ("consolidate", {}),
            ("gaps", {}),
        ]:
            assert "403 forbidden" in await refused(c, name, namespace=keyed.b, **args)
        with pytest.raises(MCPError, match="403 forbidden"):
            await c.read_resource(f"memstream://{keyed.b}/MEMORY.md")
        # its own namespace, implied by the key
        own = await call(c, "get_memories")
        assert all(r["namespace"] == keyed.a for r in own["results"])
    async with connected(http(http_url, None)) as c:
        assert "401 unauthorized" in await refused(c, "get_memories", namespace=keyed.a)
    async with connected(http(http_url, "root")) as c:
        assert "name the namespace" in await refused(c, "get_memories")
        assert (await call(c, "get_memories", namespace=keyed.b))["results"]
