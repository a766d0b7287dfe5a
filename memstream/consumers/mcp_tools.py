"""The MCP server's tools: each one call to the worker's HTTP API, with a JSON Schema for its
arguments (from the annotations below) and an error the model can act on.

Writes answer once the broker has the event (extraction follows within seconds), reads come
from the projections: the same contract as the SDK and the HTTP API.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import quote

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import AwareDatetime, Field

from memstream.consumers.mcp_link import Caller, LinkError, WorkerLink

Ctx = Context[Any, Any]
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,199}$"

Namespace = Annotated[
    str | None,
    Field(
        description="the tenant namespace; leave out to use the server's configured one or the "
        "only one your API key reaches",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$",
    ),
]
MemoryId = Annotated[str, Field(description="a memory's id (memory_id)", pattern=ID_PATTERN)]
SessionId = Annotated[
    str | None, Field(description="the conversation or run this belongs to", max_length=200)
]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def why(explain: dict[str, Any], top: int = 4) -> str:
    """The components that weighed most in a recall score, as one line: value x weight."""
    parts = sorted(
        (
            (float(explain[name]) * float(explain[name + ".w"]), name)
            for name in explain
            if not name.endswith(".w") and name + ".w" in explain
        ),
        reverse=True,
    )
    return ", ".join(
        f"{name} {float(explain[name]):.2f} x {float(explain[name + '.w']):.2f}"
        for _c, name in parts[:top]
    )


def _path(memory_id: str) -> str:
    return quote(memory_id, safe="")


def _iso(value: AwareDatetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def register(server: MCPServer[Any], link: WorkerLink) -> None:
    """Add every memstream tool to ``server``."""

    async def scope(ctx: Ctx, namespace: str | None) -> Caller:
        try:
            return await link.caller(ctx.headers, namespace)
        except LinkError as e:
            raise ToolError(str(e)) from None

    async def call(caller: Caller, method: str, path: str, **kw: Any) -> Any:
        try:
            return await link.call(method, path, caller.key, **kw)
        except LinkError as e:
            raise ToolError(str(e)) from None

    @server.tool(annotations=WRITE)
    async def add_memory(
        ctx: Ctx,
        text: Annotated[
            str, Field(min_length=1, description="what was said or learned, in plain words")
        ],
        role: Annotated[
            Literal["user", "assistant", "system", "tool"], Field(description="who said it")
        ] = "user",
        speaker: Annotated[str | None, Field(description="the speaker's name")] = None,
        session_id: SessionId = None,
        occurred_at: Annotated[
            AwareDatetime | None,
            Field(description="when it was said (ISO 8601 with an offset); default: now"),
        ] = None,
        metadata: Annotated[
            dict[str, Any] | None, Field(description="anything to keep with the turn")
        ] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """Remember something: publishes it as a conversation turn. Memories are extracted from
        it within seconds (facts, preferences, decisions, corrections); a repeat reinforces the
        memory it repeats and a changed fact supersedes the old one."""
        caller = await scope(ctx, namespace)
        message = {"role": role, "content": text, "speaker": speaker or role}
        body = {
            "namespace": caller.namespace,
            "messages": [message],
            "run_id": session_id,
            "metadata": metadata or {},
            "occurred_at": _iso(occurred_at),
        }
        out = await call(caller, "POST", "/v1/memories", json=body)
        return {"namespace": caller.namespace, **out}

    @server.tool(annotations=READ)
    async def search_memories(
        ctx: Ctx,
        query: Annotated[str, Field(min_length=1, description="what to look for")],
        limit: Annotated[int, Field(ge=1, le=200, description="at most this many")] = 10,
        session_id: SessionId = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """Search memories (mem0's shape: id, memory, score). Use recall for the full
        explanation of each score."""
        caller = await scope(ctx, namespace)
        body = {
            "namespace": caller.namespace,
            "query": query,
            "top_k": limit,
            "session_id": session_id,
        }
        return dict(await call(caller, "POST", "/v1/memories/search", json=body))

    @server.tool(annotations=READ)
    async def recall(
        ctx: Ctx,
        query: Annotated[str, Field(min_length=1, description="the question to answer")],
        k: Annotated[int, Field(ge=1, le=200, description="at most this many memories")] = 10,
        as_of: Annotated[
            AwareDatetime | None,
            Field(description="answer with what was known then (ISO 8601 with an offset)"),
        ] = None,
        include_superseded: Annotated[
            bool, Field(description="also return memories replaced by newer ones")
        ] = False,
        session_id: SessionId = None,
        namespace: Namespace = None,
        include_low_confidence: Annotated[
            bool,
            Field(
                description="return the results even when nothing relevant is known "
                "(confidence 'skipped': withheld otherwise) and in full when 'abbreviated'"
            ),
        ] = False,
    ) -> dict[str, Any]:
        """Recall the memories that answer a question, ranked and explained: each result has
        `why` (the components that weighed most), `explain` (every component's value and
        weight) and the turns it came from. Give the `query_id` to feedback afterwards.
        With confidence 'skipped' no results are returned unless include_low_confidence."""
        caller = await scope(ctx, namespace)
        body = {
            "namespace": caller.namespace,
            "query": query,
            "k": k,
            "as_of": _iso(as_of),
            "include_superseded": include_superseded,
            "include_low_confidence": include_low_confidence,
            "session_id": session_id,
        }
        out: dict[str, Any] = await call(caller, "POST", "/v1/recall", json=body)
        for hit in out.get("results", []):
            hit["why"] = why(hit.get("explain", {}))
        return out

    @server.tool(annotations=READ)
    async def context(
        ctx: Ctx,
        query: Annotated[
            str | None, Field(min_length=1, description="the question at hand, if any")
        ] = None,
        session_id: SessionId = None,
        budget: Annotated[
            int, Field(ge=1, le=100_000, description="at most this many tokens of text")
        ] = 1000,
        k: Annotated[int, Field(ge=1, le=200, description="memories recalled for query")] = 10,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """What to put into the system prompt: the hot memory (identity, profile, open tasks,
        lessons, recent), the session's working set and the recall for `query`, deduplicated
        within `budget` tokens. `text` is ready to inject; `memory_ids` and `query_id` let
        feedback target what was shown."""
        caller = await scope(ctx, namespace)
        body = {"namespace": caller.namespace, "budget": budget, "k": k}
        body |= {name: v for name, v in (("query", query), ("session_id", session_id)) if v}
        return dict(await call(caller, "POST", "/v1/context", json=body))

    @server.tool(annotations=READ)
    async def get_memory(
        ctx: Ctx, memory_id: MemoryId, namespace: Namespace = None
    ) -> dict[str, Any]:
        """One memory with its state: text, category, status, tier, Q-value, validity, the
        turns it came from."""
        caller = await scope(ctx, namespace)
        return dict(
            await call(
                caller,
                "GET",
                f"/v1/memories/{_path(memory_id)}",
                params={"namespace": caller.namespace},
            )
        )

    @server.tool(annotations=READ)
    async def get_memories(
        ctx: Ctx,
        status: Annotated[
            Literal["active", "superseded", "archived"] | None,
            Field(description="only memories in this state"),
        ] = None,
        category: Annotated[
            str | None, Field(description="only this category (fact, preference, decision, ...)")
        ] = None,
        tier: Annotated[
            Literal["core", "working", "peripheral"] | None,
            Field(description="only this tier"),
        ] = None,
        session_id: SessionId = None,
        limit: Annotated[int, Field(ge=1, le=10_000, description="at most this many")] = 100,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """List memories, oldest first, optionally filtered."""
        caller = await scope(ctx, namespace)
        params = {
            "namespace": caller.namespace,
            "status": status,
            "category": category,
            "tier": tier,
            "session_id": session_id,
            "limit": limit,
        }
        return dict(await call(caller, "GET", "/v1/memories", params=params))

    @server.tool(annotations=WRITE)
    async def update_memory(
        ctx: Ctx,
        memory_id: MemoryId,
        text: Annotated[str, Field(min_length=1, description="the corrected text")],
        reason: Annotated[str | None, Field(max_length=500, description="why")] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """Correct a memory's text (an edit event; the old text stays in its history)."""
        caller = await scope(ctx, namespace)
        body = {"namespace": caller.namespace, "text": text, "reason": reason}
        return dict(await call(caller, "PUT", f"/v1/memories/{_path(memory_id)}", json=body))

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        )
    )
    async def delete_memory(
        ctx: Ctx,
        memory_id: MemoryId,
        reason: Annotated[str | None, Field(max_length=500, description="why")] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """Forget a memory: it is archived and never recalled again (nothing is physically
        removed; memory_history still shows it)."""
        caller = await scope(ctx, namespace)
        body = {"namespace": caller.namespace, "reason": reason}
        return dict(
            await call(
                caller,
                "DELETE",
                f"/v1/memories/{_path(memory_id)}",
                params={"namespace": caller.namespace},
                json=body,
            )
        )

    @server.tool(annotations=READ)
    async def memory_history(
        ctx: Ctx, memory_id: MemoryId, namespace: Namespace = None
    ) -> dict[str, Any]:
        """Every event of a memory from the log, oldest first: created, reinforced, updated,
        superseded, Q-value changes, tier moves, archived."""
        caller = await scope(ctx, namespace)
        return dict(
            await call(
                caller,
                "GET",
                f"/v1/memories/{_path(memory_id)}/history",
                params={"namespace": caller.namespace},
            )
        )

    @server.tool(annotations=WRITE)
    async def feedback(
        ctx: Ctx,
        query_id: Annotated[
            str | None,
            Field(
                description="a recall's query_id: credits its results by rank", pattern=ID_PATTERN
            ),
        ] = None,
        memory_ids: Annotated[
            list[Annotated[str, Field(pattern=ID_PATTERN)]] | None,
            Field(description="or the memories themselves", max_length=1000),
        ] = None,
        outcome: Annotated[
            Literal["positive", "negative", "very_negative", "correction"] | None,
            Field(description="how useful they were (or give reward)"),
        ] = None,
        reward: Annotated[
            float | None, Field(ge=0.0, le=1.0, description="usefulness from 0 to 1")
        ] = None,
        reason: Annotated[str | None, Field(description="why")] = None,
        correction: Annotated[
            str | None, Field(description="the corrected statement, with outcome=correction")
        ] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """Say how useful recalled memories were: useful ones rise in later recalls (Q-value
        learning), useless ones sink. Target a recall by query_id or memories by id (both: those
        memories as answers to that recall's question, so a negative sinks them for that
        question above all); give an outcome or a reward."""
        caller = await scope(ctx, namespace)
        body = {
            "namespace": caller.namespace,
            "query_id": query_id,
            "memory_ids": memory_ids or [],
            "outcome": outcome,
            "reward": reward,
            "reason": reason,
            "correction": correction,
        }
        return dict(await call(caller, "POST", "/v1/feedback", json=body))

    @server.tool(annotations=WRITE)
    async def observe_workflow(
        ctx: Ctx,
        workflow: Annotated[
            str, Field(min_length=1, max_length=200, description="the workflow's name")
        ],
        outcome: Annotated[
            Literal["success", "failure", "corrected", "missed"],
            Field(description="how this run went"),
        ],
        detail: Annotated[str | None, Field(description="what happened")] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """Record how one run of a workflow went (telemetry for workflow_health; never
        recalled as a memory)."""
        caller = await scope(ctx, namespace)
        body = {
            "namespace": caller.namespace,
            "workflow": workflow,
            "outcome": outcome,
            "detail": detail,
        }
        return dict(await call(caller, "POST", "/v1/workflows", json=body))

    @server.tool(annotations=READ)
    async def workflow_health(
        ctx: Ctx,
        workflow: Annotated[str | None, Field(description="one workflow (default: all)")] = None,
        evidence_limit: Annotated[
            int, Field(ge=1, le=1000, description="unsuccessful runs shown per workflow")
        ] = 10,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """Each workflow's health over 7 and 30 days (healthy, degraded, or too few runs to
        judge), the unsuccessful runs behind it, and what to do about them."""
        caller = await scope(ctx, namespace)
        params = {"namespace": caller.namespace, "workflow": workflow, "limit": evidence_limit}
        return dict(await call(caller, "GET", "/v1/workflows/health", params=params))

    @server.tool(annotations=READ)
    async def gaps(
        ctx: Ctx,
        days: Annotated[int, Field(ge=1, le=3650, description="look back this many days")] = 30,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """Knowledge gaps: topics searched often whose answers scored poorly, with example
        questions and a suggestion."""
        caller = await scope(ctx, namespace)
        params = {"namespace": caller.namespace, "days": days}
        return dict(await call(caller, "GET", "/v1/gaps", params=params))

    @server.tool(annotations=READ)
    async def graph(
        ctx: Ctx,
        memory_id: MemoryId,
        hops: Annotated[int, Field(ge=1, le=4, description="how far to walk the edges")] = 2,
        relation: Annotated[
            Literal[
                "supersedes", "contradicts", "causes", "elaborates", "same_entity", "related_to"
            ]
            | None,
            Field(description="only edges of this relation (default: all)"),
        ] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """A memory's neighbourhood in the relation graph: the memories within `hops` edges
        (each with its depth) and the typed edges among them (causes, same_entity,
        elaborates, supersedes, contradicts), each with its confidence and the rule that
        found it. Use it to follow a cause, an update or everything linked to one memory."""
        caller = await scope(ctx, namespace)
        params: dict[str, Any] = {"namespace": caller.namespace, "hops": hops}
        if relation:
            params["relation"] = relation
        return dict(await call(caller, "GET", f"/v1/graph/{_path(memory_id)}", params=params))

    @server.tool(annotations=READ)
    async def entity(
        ctx: Ctx,
        name: Annotated[
            str | None,
            Field(
                description="a person, place or thing by any of its names; leave out to list "
                "the namespace's entities",
                max_length=200,
            ),
        ] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """Everything remembered about one entity under any of its names ("Mel" and
        "Melanie"), in event-time order; or, without a name, the entities with their
        aliases and how many memories name them."""
        caller = await scope(ctx, namespace)
        path = f"/v1/entities/{_path(name)}" if name else "/v1/entities"
        return dict(await call(caller, "GET", path, params={"namespace": caller.namespace}))

    @server.tool(annotations=WRITE)
    async def tree(
        ctx: Ctx,
        action: Annotated[
            Literal["show", "add", "remove"],
            Field(description="show the tree (default), or add / remove a node"),
        ] = "show",
        path: Annotated[
            str | None,
            Field(
                description="the node for add / remove, e.g. work/projects/budget-tracker "
                "(at most 4 levels)",
                max_length=200,
            ),
        ] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """The namespace's category tree: memories placed by category and entity (at most 50
        nodes, 4 levels), each node with how many memories it holds. A node you add gathers
        every memory naming its last segment; a node you remove hides its subtree. Use a
        node's path as recall's `tree` filter."""
        caller = await scope(ctx, namespace)
        if action == "show":
            return dict(
                await call(caller, "GET", "/v1/tree", params={"namespace": caller.namespace})
            )
        if not path:
            raise ToolError(f"path: {action} needs the node's path")
        body = {"namespace": caller.namespace, "path": path}
        method = "POST" if action == "add" else "DELETE"
        return dict(await call(caller, method, "/v1/tree", json=body))

    @server.tool(annotations=READ)
    async def audit(
        ctx: Ctx,
        memory_id: Annotated[
            str | None,
            Field(description="the memory whose causal chain to show", pattern=ID_PATTERN),
        ] = None,
        as_of: Annotated[
            AwareDatetime | None,
            Field(description="or: what the namespace knew at this time (ISO 8601, offset)"),
        ] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """Why a memory is what it is: its source turns, the extraction, each decision with its
        evidence, the feedback behind Q changes. Or, with as_of, the namespace's memories as
        they stood at that time."""
        if (memory_id is None) == (as_of is None):
            raise ToolError(
                "give memory_id (the causal chain of one memory) or as_of (what the namespace "
                "knew at that time), exactly one of them"
            )
        caller = await scope(ctx, namespace)
        if memory_id is not None:
            return dict(
                await call(
                    caller,
                    "GET",
                    f"/v1/memories/{_path(memory_id)}/audit",
                    params={"namespace": caller.namespace},
                )
            )
        params = {"namespace": caller.namespace, "as_of": _iso(as_of)}
        return dict(await call(caller, "GET", "/v1/audit", params=params))

    @server.tool(annotations=WRITE)
    async def consolidate(
        ctx: Ctx,
        apply: Annotated[
            bool, Field(description="act on the plan; false (default) only shows it")
        ] = False,
        at: Annotated[
            AwareDatetime | None,
            Field(description="run as of this event time (default: the namespace's latest)"),
        ] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        """The dream cycle: decay, expiry, forgetting, merging, summaries, archival. A dry run
        unless apply=true: it shows each planned action with its rule and writes nothing."""
        caller = await scope(ctx, namespace)
        body = {"apply": apply, "namespaces": [caller.namespace], "at": _iso(at)}
        out = dict(await call(caller, "POST", "/v1/consolidate", json=body))
        out["mode"] = (
            "applied" if apply else "dry run: nothing written; call again with apply=true to act"
        )
        return out
