"""The MCP server's resources: what an agent reads into its context without asking a
question. ``memstream://{namespace}/MEMORY.md`` is the namespace's hot memory (the worker's
``/v1/memory.md``), or from a worker without it a summary of the top memories;
``memstream://{namespace}/gaps`` is the gap report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from memstream.consumers.mcp_link import LinkError, WorkerLink

Ctx = Context[Any, Any]
TIER_RANK = {"core": 0, "working": 1, "peripheral": 2}
TOP = 20


def rank(row: Mapping[str, Any]) -> tuple[float, ...]:
    """Top memories first: by tier, then Q-value (usefulness), importance, use."""
    return (
        TIER_RANK.get(str(row.get("tier")), 3),
        -float(row.get("q_value") or 0.0),
        -float(row.get("importance") or 0.0),
        -float(row.get("access_count") or 0),
    )


def top_memories_markdown(namespace: str, rows: list[Mapping[str, Any]], top: int = TOP) -> str:
    """A MEMORY.md of the namespace's most useful active memories, grouped by category."""
    chosen = sorted((r for r in rows if r.get("status") == "active"), key=rank)[:top]
    lines = [f"# Memory: {namespace}", ""]
    if not chosen:
        return "\n".join([*lines, "No memories yet.", ""])
    lines += [
        f"The {len(chosen)} most useful of {len(rows)} memories (by tier, Q-value, importance, "
        "use).",
        "",
    ]
    for category in sorted({str(r.get("category")) for r in chosen}):
        lines.append(f"## {category}")
        for r in chosen:
            if str(r.get("category")) == category:
                lines.append(
                    f"- {r.get('text')} (tier {r.get('tier')}, Q {float(r.get('q_value') or 0):.2f},"
                    f" id {r.get('memory_id')})"
                )
        lines.append("")
    return "\n".join(lines)


async def memory_md(link: WorkerLink, headers: Mapping[str, str] | None, namespace: str) -> str:
    try:
        caller = await link.caller(headers, namespace)
        try:
            return await link.text(
                "/v1/memory.md", caller.key, params={"namespace": caller.namespace}
            )
        except LinkError as e:
            if e.status not in (404, 405):  # a worker without hot memory: summarise
                raise
        body = await link.call(
            "GET",
            "/v1/memories",
            caller.key,
            params={"namespace": caller.namespace, "status": "active", "limit": 10_000},
        )
    except LinkError as e:
        raise ResourceError(str(e)) from None
    return top_memories_markdown(caller.namespace, list(body.get("results", [])))


async def gap_report(link: WorkerLink, headers: Mapping[str, str] | None, namespace: str) -> str:
    try:
        caller = await link.caller(headers, namespace)
        body = await link.call(
            "GET", "/v1/gaps", caller.key, params={"namespace": caller.namespace}
        )
    except LinkError as e:
        raise ResourceError(str(e)) from None
    return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode()


def register(server: MCPServer[Any], link: WorkerLink) -> None:
    @server.resource(
        "memstream://{namespace}/MEMORY.md",
        name="memory",
        title="Hot memory",
        description="what the agent should always know about this namespace (markdown)",
        mime_type="text/markdown",
    )
    async def memory_template(namespace: str, ctx: Ctx) -> str:
        return await memory_md(link, ctx.headers, namespace)

    @server.resource(
        "memstream://{namespace}/gaps",
        name="gaps",
        title="Gap report",
        description="topics searched often but answered poorly (JSON)",
        mime_type="application/json",
    )
    async def gaps_template(namespace: str, ctx: Ctx) -> str:
        return await gap_report(link, ctx.headers, namespace)

    pinned = link.pinned
    if pinned and link.transport == "stdio":
        # Listed for clients that show resources but not templates. Static resources get no
        # request context, so only over stdio, where the key is the server's own anyway.

        @server.resource(
            f"memstream://{pinned}/MEMORY.md",
            name=f"memory-{pinned}",
            title=f"Hot memory of {pinned}",
            mime_type="text/markdown",
        )
        async def memory_pinned() -> str:
            return await memory_md(link, None, pinned)

        @server.resource(
            f"memstream://{pinned}/gaps",
            name=f"gaps-{pinned}",
            title=f"Gap report of {pinned}",
            mime_type="application/json",
        )
        async def gaps_pinned() -> str:
            return await gap_report(link, None, pinned)
