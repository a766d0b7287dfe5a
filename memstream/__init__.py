"""memstream: long-term memory for AI agents, as an event-sourced stream pipeline.

The public API lives here; the packages behind it are implementation.
"""

from memstream.consumers.client import AsyncMemory, Memory, MemstreamError
from memstream.consumers.producer import AsyncProducer, Producer, PublishError
from memstream.infra.settings import ConfigError, Settings
from memstream.infra.settings import load as load_settings
from memstream.schemas import (
    ConversationTurn,
    Envelope,
    EventValidationError,
    Feedback,
    MemoryAccessed,
    WorkflowObserved,
    decode,
    encode,
    make_event,
)

__all__ = [
    "AsyncMemory",
    "AsyncProducer",
    "ConfigError",
    "ConversationTurn",
    "Envelope",
    "EventValidationError",
    "Feedback",
    "Memory",
    "MemoryAccessed",
    "MemstreamError",
    "Producer",
    "PublishError",
    "Settings",
    "WorkflowObserved",
    "decode",
    "encode",
    "load_settings",
    "make_event",
]
