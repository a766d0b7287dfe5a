"""A local stand-in for the OpenAI Responses API (``POST /v1/responses``).

It answers in the real response shape (id, object "response", an output message
whose output_text is the JSON, usage, status "completed"), so the real ``openai``
client can be pointed at it with ``base_url=server.base_url``.

By default it derives facts from the request deterministically: one fact per
sentence of every user turn, citing that turn. Tests script other behaviours
(rate limits, server errors, delays past the client timeout, malformed JSON,
canned facts) with ``server.script(...)``; each request consumes one, then the
default applies again.

Use it as ``async with FakeResponsesServer() as server`` inside a running loop,
or ``with serve_in_thread() as server`` from plain (synchronous) code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

# --- scripted behaviours -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Derive:
    """Facts derived from the request: one per user sentence (the default)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """Answer with exactly this output text (e.g. hand-written JSON)."""

    text: str
    status: str = "completed"


@dataclass(frozen=True, slots=True)
class CannedFacts:
    """Answer with these fact objects, serialised as {"facts": [...]}."""

    facts: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Malformed:
    """A completed response whose output text is not valid JSON."""

    text: str = '{"facts": [{"text": "User likes'


@dataclass(frozen=True, slots=True)
class RateLimited:
    """HTTP 429 with a retry-after header (seconds), as the real API sends."""

    retry_after: float | None = 0.0


@dataclass(frozen=True, slots=True)
class ServerError:
    status: int = 500


@dataclass(frozen=True, slots=True)
class Delay:
    """Wait (e.g. past the client's timeout), then behave as ``then``."""

    seconds: float
    then: Behaviour = field(default_factory=Derive)


Behaviour = Derive | Reply | CannedFacts | Malformed | RateLimited | ServerError | Delay
#: A default may depend on the request, e.g. fail only for requests citing a given turn.
Chooser = Callable[[dict[str, Any]], Behaviour]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    body: dict[str, Any]
    headers: dict[str, str]
    behaviour: Behaviour


# --- deterministic fact derivation -----------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _input_text(body: Mapping[str, Any]) -> str:
    raw = body.get("input")
    if isinstance(raw, str):
        return raw
    parts: list[str] = []
    for item in raw if isinstance(raw, list) else []:
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return "\n".join(parts)


def _turns(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = _input_text(body)
    start = text.find("{")
    if start < 0:
        return []
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return []
    turns = data.get("turns") if isinstance(data, dict) else None
    return [t for t in turns if isinstance(t, dict)] if isinstance(turns, list) else []


def derive_facts(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One schema-conformant fact per sentence of each user turn in the request."""
    facts: list[dict[str, Any]] = []
    for turn in _turns(body):
        if turn.get("role") != "user" or not isinstance(turn.get("turn_id"), str):
            continue
        speaker = str(turn.get("speaker") or "user")
        name = "User" if speaker.lower() == "user" else speaker
        for sentence in _SENTENCE_END.split(str(turn.get("text", "")).strip()):
            sentence = sentence.strip().rstrip(".!?").strip()
            if not sentence:
                continue
            facts.append(
                {
                    "text": f"{name} said: {sentence}",
                    "category": "fact",
                    "confidence": 0.9,
                    "importance": 0.5,
                    "entities": [],
                    "valid_from": None,
                    "valid_until": None,
                    "kind": "note",
                    "source_turn_ids": [turn["turn_id"]],
                    "subject": name.lower(),
                    "slot": None,
                }
            )
    return facts


def estimate_tokens(text: str) -> int:
    """A stable stand-in for a tokenizer: about four characters per token."""
    return max(1, len(text) // 4)


# --- the server ----------------------------------------------------------------------


class FakeResponsesServer:
    """An aiohttp server on 127.0.0.1 and a free port, speaking the Responses API."""

    def __init__(
        self, *, default: Behaviour | Chooser | None = None, latency_s: float = 0.0
    ) -> None:
        self.default: Behaviour | Chooser = default or Derive()
        self.latency_s = latency_s  # added to every request, so concurrency is observable
        self.requests: list[RecordedRequest] = []
        self.usage: list[tuple[int, int]] = []  # (input, output) tokens of each completed response
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Behaviour] = deque()
        self._lock = threading.Lock()  # script() may be called from another thread
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._counter = 0
        self._gate: asyncio.Event | None = None

    # -- scripting and inspection --

    def script(self, *behaviours: Behaviour) -> None:
        """Queue behaviours; each request consumes one, in order."""
        with self._lock:
            self._script.extend(behaviours)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    @property
    def base_url(self) -> str:
        if self._port is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def tokens_in(self) -> int:
        return sum(i for i, _ in self.usage)

    @property
    def tokens_out(self) -> int:
        return sum(o for _, o in self.usage)

    def pause(self) -> None:
        """Hold every request (after it is counted in flight) until ``resume()``."""
        self._gate = asyncio.Event()

    def resume(self) -> None:
        if self._gate is not None:
            self._gate.set()
            self._gate = None

    # -- lifecycle --

    async def start(self) -> FakeResponsesServer:
        app = web.Application()
        app.router.add_post("/v1/responses", self._handle)
        # handler_cancellation: a client that timed out and hung up stops its handler
        self._runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=1.0
        )
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock, shutdown_timeout=1.0).start()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeResponsesServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- handling --

    def _next(self, body: dict[str, Any]) -> Behaviour:
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self.default(body) if callable(self.default) else self.default

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "invalid_request_error", "body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "invalid_request_error", "body must be an object")
        behaviour = self._next(body)
        self.requests.append(RecordedRequest(body, dict(request.headers), behaviour))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            gate = self._gate
            if gate is not None:
                await gate.wait()
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            return await self._perform(behaviour, body)
        finally:
            self.in_flight -= 1

    async def _perform(self, behaviour: Behaviour, body: dict[str, Any]) -> web.StreamResponse:
        match behaviour:
            case Delay(seconds=seconds, then=then):
                await asyncio.sleep(seconds)
                return await self._perform(then, body)
            case RateLimited(retry_after=after):
                headers = {} if after is None else {"retry-after": f"{after:g}"}
                return _error(
                    429,
                    "requests",
                    "Rate limit reached for requests",
                    "rate_limit_exceeded",
                    headers,
                )
            case ServerError(status=status):
                return _error(
                    status, "server_error", "The server had an error while processing your request."
                )
            case Reply(text=text, status=status):
                return self._completed(body, text, status)
            case Malformed(text=text):
                return self._completed(body, text)
            case CannedFacts(facts=facts):
                return self._completed(body, json.dumps({"facts": list(facts)}))
            case _:
                return self._completed(body, json.dumps({"facts": derive_facts(body)}))

    def _completed(
        self, body: dict[str, Any], text: str, status: str = "completed"
    ) -> web.Response:
        self._counter += 1
        n = self._counter
        prompt = str(body.get("instructions") or "") + _input_text(body)
        tokens_in, tokens_out = estimate_tokens(prompt), estimate_tokens(text)
        self.usage.append((tokens_in, tokens_out))
        payload = {
            "id": f"resp_fake{n:06d}",
            "object": "response",
            "created_at": 1_700_000_000 + n,
            "status": status,
            "error": None,
            "incomplete_details": None
            if status == "completed"
            else {"reason": "max_output_tokens"},
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": body.get("model", "fake-model"),
            "output": [
                {
                    "type": "message",
                    "id": f"msg_fake{n:06d}",
                    "status": status,
                    "role": "assistant",
                    "content": [
                        {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
                    ],
                }
            ],
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": None, "summary": None},
            "store": body.get("store", False),
            "temperature": body.get("temperature", 1.0),
            "text": body.get("text", {"format": {"type": "text"}}),
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": {
                "input_tokens": tokens_in,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": tokens_out,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": tokens_in + tokens_out,
            },
            "user": None,
            "metadata": {},
        }
        return web.json_response(payload, headers={"x-request-id": f"req_fake{n:06d}"})


def _error(
    status: int,
    kind: str,
    message: str,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return web.json_response(body, status=status, headers=dict(headers or {}))


@contextlib.contextmanager
def serve_in_thread(
    *, default: Behaviour | Chooser | None = None, latency_s: float = 0.0
) -> Iterator[FakeResponsesServer]:
    """Run the server on its own event loop in a daemon thread, for synchronous callers."""
    server = FakeResponsesServer(default=default, latency_s=latency_s)
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, name="fake-responses-server", daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("fake Responses server did not start")
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def worker_env(server: FakeResponsesServer, **settings: str) -> dict[str, str]:
    """The settings that point a worker (``tests.harness.WorkerProcess``) at ``server``,
    with ``settings`` (``openai_timeout_s="1"``, ...) on top."""
    return {"openai_base_url": server.base_url, "openai_api_key": "test-key", **settings}
