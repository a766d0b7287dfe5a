"""LLM calls per 100 turns on the evaluation conversations, buffer on vs one call per turn.

The real LLM extractor (openai client, Responses API) runs against the local fake
Responses server, so the count is what a deployment would pay for, not an estimate.
"""

from __future__ import annotations

from datetime import timedelta

from bench.eval_data import load_conversations
from bench.figures import Figure
from bench.offline_pipeline import run_offline
from memstream.core.buffer_policy import BufferConfig
from memstream.streams.llm_extractor import LLMExtractor, LLMSettings
from tests.fakes.responses_server import serve_in_thread


def run() -> list[Figure]:
    turns = load_conversations()
    with serve_in_thread() as server:
        settings = LLMSettings(base_url=server.base_url, api_key="bench", timeout_s=10)
        buffered = run_offline(turns, extractor=LLMExtractor(settings))
        per_turn = run_offline(
            turns,
            extractor=LLMExtractor(settings),
            buffer=BufferConfig(max_turns=1, max_age=timedelta(0), urgent=None),
        )
    n = buffered.turns
    return [
        Figure(
            "LLM calls per 100 turns (buffer on)",
            100 * buffered.llm_calls / n,
            "calls",
            100 * per_turn.llm_calls / n,
            "one extraction per turn",
            better="lower",
            notes=f"{n} turns of the evaluation conversations; goal <= 15",
        )
    ]
