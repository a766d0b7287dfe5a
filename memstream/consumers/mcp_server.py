"""``memstream mcp``: the memory as a Model Context Protocol server (the official ``mcp`` SDK).

stdio for desktop and coding agents (the client starts ``memstream mcp`` and speaks on its
stdin/stdout), streamable HTTP for remote clients (``memstream mcp --transport http``). Either
way the server holds no memory of its own: every tool is a call to the running worker's HTTP
API (``consumers/mcp_link.py``), with the caller's key, so the worker's key scoping applies.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from memstream.consumers import mcp_resources, mcp_tools
from memstream.consumers.mcp_link import Transport, WorkerLink
from memstream.infra.settings import Settings

INSTRUCTIONS = (
    "memstream is a long-term memory. Call recall (or search_memories) before answering from "
    "memory, add_memory to remember what the user says that matters, and feedback with the "
    "recall's query_id once you know whether the memories helped. Writes are queued: a memory "
    "appears a few seconds after add_memory. The resource memstream://<namespace>/MEMORY.md "
    "holds what is always worth knowing."
)


def build(settings: Settings, transport: Transport) -> tuple[MCPServer[Any], WorkerLink]:
    link = WorkerLink(settings, transport)
    server: MCPServer[Any] = MCPServer(
        "memstream", instructions=INSTRUCTIONS, version="1", log_level="WARNING"
    )
    mcp_tools.register(server, link)
    mcp_resources.register(server, link)
    return server, link


async def serve_stdio(settings: Settings) -> None:
    server, link = build(settings, "stdio")
    try:
        await server.run_stdio_async()
    finally:
        await link.aclose()


async def serve_http(settings: Settings, host: str, port: int, path: str) -> None:
    """Streamable HTTP on host:port; prints the endpoint once it accepts connections (port 0:
    a free one)."""
    import uvicorn

    server, link = build(settings, "http")
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    web = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(web.serve)
            while not web.started:
                if web.should_exit:
                    return
                await anyio.sleep(0.05)
            bound = web.servers[0].sockets[0].getsockname()[1]
            print(f"memstream mcp: streamable HTTP on http://{host}:{bound}{path}", flush=True)
    finally:
        await link.aclose()


def run(
    settings: Settings,
    transport: Transport,
    host: str = "127.0.0.1",
    port: int = 8765,
    path: str = "/mcp",
) -> None:
    if transport == "stdio":
        anyio.run(serve_stdio, settings)
    else:
        try:
            anyio.run(serve_http, settings, host, port, path)
        except KeyboardInterrupt:
            print("memstream mcp: stopped", file=sys.stderr)
