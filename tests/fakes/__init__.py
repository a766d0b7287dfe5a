"""Test doubles for external services (the OpenAI Responses API)."""

from .responses_server import (
    Behaviour,
    CannedFacts,
    Chooser,
    Delay,
    Derive,
    FakeResponsesServer,
    Malformed,
    RateLimited,
    RecordedRequest,
    Reply,
    ServerError,
    derive_facts,
    serve_in_thread,
)

__all__ = [
    "Behaviour",
    "CannedFacts",
    "Chooser",
    "Delay",
    "Derive",
    "FakeResponsesServer",
    "Malformed",
    "RateLimited",
    "RecordedRequest",
    "Reply",
    "ServerError",
    "derive_facts",
    "serve_in_thread",
]
