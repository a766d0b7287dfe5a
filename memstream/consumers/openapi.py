"""The OpenAPI 3.1 document of the HTTP API, built from the same JSON Schemas the event
decoder enforces for the bodies that become events."""

from __future__ import annotations

from typing import Any

NS = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"}
ERROR = {
    "description": "error",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    "error": {
                        "type": "object",
                        "properties": {
                            "code": {"type": "string"},
                            "message": {"type": "string"},
                            "path": {"type": "string"},
                        },
                    }
                },
            }
        }
    },
}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _ok(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description}
    if schema is not None:
        out["content"] = {"application/json": {"schema": schema}}
    return {"200": out, "400": ERROR, "401": ERROR, "403": ERROR}


def _busy(responses: dict[str, Any]) -> dict[str, Any]:
    """A recall route: 429 with Retry-After when the bounded recall queue is full."""
    return {**responses, "429": {**ERROR, "description": "too many recalls; see Retry-After"}}


def _timed(responses: dict[str, Any]) -> dict[str, Any]:
    """A recall's answer: its own time in a Server-Timing header."""
    ok = {
        **responses["200"],
        "headers": {
            "Server-Timing": {
                "description": "the recall's own time, recall;dur=<ms> (without HTTP and JSON)",
                "schema": {"type": "string"},
            }
        },
    }
    return {**responses, "200": ok}


QUEUED = {
    "type": "object",
    "properties": {"event_id": {"type": "string"}, "status": {"const": "queued"}},
}
HIT = {
    "type": "object",
    "properties": {
        "memory_id": {"type": "string"},
        "text": {"type": "string"},
        "score": {"type": "number"},
        "explain": {"type": "object"},
        "source_turn_ids": {"type": "array", "items": {"type": "string"}},
        "category": {"type": "string"},
        "status": {"type": "string"},
        "created_at": {"type": "string"},
    },
}
RECALL = {
    "type": "object",
    "properties": {
        "query_id": {"type": "string"},
        "confidence": {"enum": ["full", "abbreviated", "skipped"]},
        "intent": {"type": "string"},
        "results": {"type": "array", "items": HIT},
    },
}
TREE_EDIT = {
    "type": "object",
    "required": ["namespace", "path"],
    "properties": {
        "namespace": NS,
        "path": {"type": "string", "description": "e.g. work/projects (1-4 segments)"},
        "reason": {"type": "string"},
        "occurred_at": {"type": "string", "format": "date-time"},
    },
}
NS_QUERY = [{"name": "namespace", "in": "query", "required": True, "schema": NS}]
ID_PATH = [{"name": "memory_id", "in": "path", "required": True, "schema": {"type": "string"}}]


def _int_query(name: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": "integer", "minimum": 1}}


def document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "memstream",
            "version": "1",
            "description": "Long-term memory for AI agents. Writes are events (answered once the broker "
            "acknowledged them); reads come from the projections. Send "
            "`Authorization: Bearer <key>` when API keys are configured.",
        },
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": {
            "/v1/memories": {
                "post": {
                    "summary": "add messages (published as conversation turns)",
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["messages"],
                            "properties": {
                                "messages": {
                                    "oneOf": [
                                        {"type": "string"},
                                        {
                                            "type": "array",
                                            "items": {
                                                "type": "object",
                                                "properties": {
                                                    "role": {"type": "string"},
                                                    "content": {"type": "string"},
                                                    "turn_id": {"type": "string"},
                                                },
                                            },
                                        },
                                    ]
                                },
                                "user_id": NS,
                                "agent_id": NS,
                                "namespace": NS,
                                "run_id": {"type": "string"},
                                "metadata": {"type": "object"},
                                "occurred_at": {"type": "string", "format": "date-time"},
                            },
                        }
                    ),
                    "responses": _ok("event ids, queued for extraction"),
                },
                "get": {
                    "summary": "all memories of a namespace",
                    "parameters": [
                        *NS_QUERY,
                        *(
                            {"name": n, "in": "query", "schema": {"type": "string"}}
                            for n in ("status", "category", "tier", "session_id", "limit")
                        ),
                    ],
                    "responses": _ok("memories"),
                },
            },
            "/v1/memories/search": {
                "post": {
                    "summary": "mem0-style search",
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["query"],
                            "properties": {
                                "query": {"type": "string"},
                                "user_id": NS,
                                "namespace": NS,
                                "top_k": {"type": "integer"},
                            },
                        }
                    ),
                    "responses": _busy(_ok("results")),
                }
            },
            "/v1/recall": {
                "post": {
                    "summary": "explained recall",
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["query", "namespace"],
                            "properties": {
                                "query": {"type": "string"},
                                "namespace": NS,
                                "k": {"type": "integer", "minimum": 1, "maximum": 200},
                                "as_of": {"type": "string", "format": "date-time"},
                                "include_superseded": {"type": "boolean"},
                                "include_archived": {"type": "boolean"},
                                "include_low_confidence": {
                                    "type": "boolean",
                                    "description": "results even when confidence is "
                                    "'skipped' (withheld otherwise), whole when 'abbreviated'",
                                },
                                "session_id": {"type": "string"},
                            },
                        }
                    ),
                    "responses": _timed(_busy(_ok("ranked, explained memories", RECALL))),
                }
            },
            "/v1/memories/{memory_id}": {
                "get": {"parameters": [*ID_PATH, *NS_QUERY], "responses": _ok("the memory")},
                "put": {
                    "summary": "update (a MemoryEdit event)",
                    "parameters": ID_PATH,
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["namespace", "text"],
                            "properties": {
                                "namespace": NS,
                                "text": {"type": "string"},
                                "reason": {"type": "string"},
                            },
                        }
                    ),
                    "responses": _ok("queued", QUEUED),
                },
                "delete": {
                    "summary": "invalidate (archived, never physically deleted)",
                    "parameters": [*ID_PATH, *NS_QUERY],
                    "responses": _ok("queued", QUEUED),
                },
            },
            "/v1/memories/{memory_id}/history": {
                "get": {
                    "parameters": [*ID_PATH, *NS_QUERY],
                    "responses": _ok("the memory's events from the log"),
                }
            },
            "/v1/feedback": {
                "post": {
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["namespace"],
                            "properties": {
                                "namespace": NS,
                                "memory_ids": {"type": "array", "items": {"type": "string"}},
                                "query_id": {"type": "string"},
                                "outcome": {
                                    "enum": ["positive", "negative", "very_negative", "correction"]
                                },
                                "reward": {"type": "number", "minimum": 0, "maximum": 1},
                                "reason": {"type": "string"},
                                "correction": {"type": "string"},
                            },
                        }
                    ),
                    "responses": _ok("queued", QUEUED),
                }
            },
            "/v1/workflows": {
                "post": {
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["namespace", "workflow", "outcome"],
                            "properties": {
                                "namespace": NS,
                                "workflow": {"type": "string"},
                                "outcome": {"enum": ["success", "failure", "corrected", "missed"]},
                                "detail": {"type": "string"},
                            },
                        }
                    ),
                    "responses": _ok("queued", QUEUED),
                }
            },
            "/v1/whoami": {
                "get": {"responses": _ok("the namespaces the presented key reaches (* = all)")}
            },
            "/v1/gaps": {
                "get": {
                    "summary": "knowledge gaps: topics searched often, answered poorly",
                    "parameters": [*NS_QUERY, _int_query("days")],
                    "responses": _ok("gaps"),
                }
            },
            "/v1/metadata": {
                "get": {
                    "summary": "URLs, commands, paths, versions and ids kept on the memories",
                    "parameters": [
                        *NS_QUERY,
                        {
                            "name": "kind",
                            "in": "query",
                            "schema": {"enum": ["url", "command", "path", "version", "id"]},
                        },
                        {"name": "contains", "in": "query", "schema": {"type": "string"}},
                        _int_query("limit"),
                    ],
                    "responses": _ok("one row per value: memory_id, kind, value, text"),
                }
            },
            "/v1/workflows/health": {
                "get": {
                    "summary": "workflow health with the unsuccessful runs behind it",
                    "parameters": [
                        *NS_QUERY,
                        {"name": "workflow", "in": "query", "schema": {"type": "string"}},
                        _int_query("limit"),
                    ],
                    "responses": _ok("workflows"),
                }
            },
            "/v1/audit": {
                "get": {
                    "summary": "the namespace's memories as they stood at a time",
                    "parameters": [
                        *NS_QUERY,
                        {
                            "name": "as_of",
                            "in": "query",
                            "required": True,
                            "schema": {"type": "string", "format": "date-time"},
                        },
                    ],
                    "responses": _ok("memories"),
                }
            },
            "/v1/memories/{memory_id}/audit": {
                "get": {
                    "summary": "the causal chain of a memory",
                    "parameters": [*ID_PATH, *NS_QUERY],
                    "responses": _ok("steps"),
                }
            },
            "/v1/tree": {
                "get": {
                    "summary": "the namespace's category tree (at: judge the 60-day idle rule "
                    "at that event time; format=text: the rendered tree)",
                    "parameters": [
                        *NS_QUERY,
                        {"name": "at", "in": "query", "schema": {"type": "string"}},
                        {"name": "format", "in": "query", "schema": {"enum": ["json", "text"]}},
                    ],
                    "responses": _ok("nodes, rendered text, what was pruned or trimmed"),
                },
                "post": {
                    "summary": "add a node (a TreeEdit event)",
                    "requestBody": _body(TREE_EDIT),
                    "responses": _ok("queued"),
                },
                "delete": {
                    "summary": "remove a node and its subtree (a TreeEdit event)",
                    "requestBody": _body(TREE_EDIT),
                    "responses": _ok("queued"),
                },
            },
            "/v1/consolidate": {
                "post": {
                    "summary": "the dream cycle (a dry run unless apply); a scoped key names its "
                    "own namespaces",
                    "requestBody": _body(
                        {
                            "type": "object",
                            "properties": {
                                "apply": {"type": "boolean"},
                                "namespaces": {"type": "array", "items": NS},
                                "at": {"type": "string", "format": "date-time"},
                            },
                        }
                    ),
                    "responses": _ok("one report per namespace"),
                }
            },
            "/sql": {
                "post": {
                    "summary": "read-only SQL (admin key)",
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["sql"],
                            "properties": {"sql": {"type": "string"}, "params": {"type": "array"}},
                        }
                    ),
                    "responses": _ok("columns and rows"),
                }
            },
            "/health": {
                "get": {
                    "security": [],
                    "summary": "status ok or degraded, problems, checks (consumers/health.py)",
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/metrics": {"get": {"responses": {"200": {"description": "Prometheus text format"}}}},
        },
    }
