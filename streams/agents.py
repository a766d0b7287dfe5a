"""Agent registration: every input topic gets an agent that reads through the validation gate.

Handlers are the thin shell around the pure core: they receive a decoded envelope and
may emit events. An exception in a handler never kills the agent: the record goes to
the dead-letter topic as ``agent_error`` with its original bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import faust

from infra.settings import Settings
from schemas.envelope import Envelope
from schemas.topics import BY_ROLE
from streams.intake import IntakeStats, decoded, send_dead_letter

log = logging.getLogger("memstream.agents")

Handler = Callable[[Envelope[Any], Any], Awaitable[None]]

#: role of the input topic -> name of the agent that reads it
INPUT_AGENTS = {
    "turns": "write-path",
    "access": "access-tracker",
    "feedback": "q-learner",
    "workflows": "workflow-observer",
    "recall_requests": "recall-responder",
}


async def _accept(env: Envelope[Any], event: Any) -> None:
    """Default handler: the record is valid and stays on the log for the projections."""


def register_agent(
    app: faust.App,
    topics: Any,
    settings: Settings,
    role: str,
    name: str,
    handler: Handler,
    stats: IntakeStats,
) -> Any:
    dlq = topics["dlq"]
    expected = frozenset(BY_ROLE[role].event_types)
    limits = settings.limits

    async def agent(stream: Any) -> None:
        async for event, env in decoded(stream, dlq, name, limits, stats, expected):
            try:
                await handler(env, event)
            except Exception as e:
                log.exception("%s failed on %s %s; dead-lettering it", name, env.type, env.event_id)
                await send_dead_letter(dlq, event.message, e, name)

    agent.__name__ = name.replace("-", "_")
    # concurrency=1: one task per partition keeps a tenant's events in order.
    return app.agent(topics[role], name=name, concurrency=1)(agent)


def register_agents(app: faust.App, topics: Any, settings: Settings) -> dict[str, IntakeStats]:
    stats: dict[str, IntakeStats] = {}
    for role, name in INPUT_AGENTS.items():
        stats[name] = IntakeStats()
        register_agent(app, topics, settings, role, name, _accept, stats[name])
    return stats
