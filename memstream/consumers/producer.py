"""Producer SDK: publish turns, access events, feedback and workflow observations.

Ack-first: a publish returns the event id as soon as the broker acknowledged the
record (``acks="all"``); extraction and everything else happens later, asynchronously.
Invalid input is rejected *before* publishing with an ``EventValidationError`` that
names the field. ``AsyncProducer`` is the implementation; ``Producer`` is a sync facade
running it on a private event loop thread.

Bounded: when the broker is down or stops answering, a publish (sending and every
acknowledgement) and the producer's start fail within ``delivery_timeout_ms`` with a
``PublishError`` that names the broker address. Nothing is buffered beyond that call: the
events of a failed publish may or may not be stored, and publishing them again is safe for
turns (their ids derive from namespace and turn id, so the worker drops the repeat).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from memstream.core.event_time import event_time_error
from memstream.infra.kafka_auth import client_options
from memstream.infra.settings import Settings, load
from memstream.schemas._fields import utc_now
from memstream.schemas.envelope import (
    Envelope,
    encode,
    make_event,
    non_finite,
    record_headers,
    reject_non_finite,
    validated,
)
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import (
    AccessedMemory,
    ConversationTurn,
    Feedback,
    MemoryAccessed,
    WorkflowObserved,
)
from memstream.schemas.ids import derived_id
from memstream.schemas.topics import topic_for_type

T = TypeVar("T")


class PublishError(RuntimeError):
    """The broker did not acknowledge: nothing is known to be stored for these events."""


DELIVERY_TIMEOUT_MS = 30_000


def turn_event(
    *,
    namespace: str,
    session_id: str,
    turn_id: str,
    role: str,
    speaker: str,
    text: str,
    occurred_at: datetime | None = None,
    metadata: Mapping[str, Any] | None = None,
    producer: str = "memstream-sdk",
    settings: Settings | None = None,
) -> Envelope[ConversationTurn]:
    """A validated ConversationTurn event. Its id derives from (namespace, turn_id), so a
    retried or re-ingested turn carries the same id and consumers drop the repeat."""
    payload = ConversationTurn(
        turn_id=turn_id,
        role=role,  # type: ignore[arg-type]  # validated by make_event
        speaker=speaker,
        text=text,
        metadata=_mapping(metadata, "payload.metadata"),
    )
    at = occurred_at or utc_now()
    try:
        event_id: str | None = derived_id(at, "turn", namespace, turn_id)
    except Exception:  # a wrong type or a lone surrogate: validation names the field
        event_id = None
    env = _checked(
        payload,
        namespace=namespace,
        occurred_at=at,
        session_id=session_id,
        producer=producer,
        event_id=event_id,
        limits=(settings or Settings()).limits,
    )
    if event_id is None:  # valid after all (an ISO string for occurred_at): derive it now
        turn = env.payload
        env = replace(
            env, event_id=derived_id(env.occurred_at, "turn", env.namespace, turn.turn_id)
        )
    return in_time(env, settings or Settings())


def in_time(env: Envelope[T], settings: Settings) -> Envelope[T]:
    """``env``, or EventValidationError if its event time is out of bounds (before 1970, or
    more than ``max_future_skew_hours`` ahead of this clock; see core/event_time.py)."""
    error = event_time_error(env.occurred_at, intake=utc_now(), skew=settings.max_future_skew)
    if error is not None:
        raise error
    return env


def _checked(payload: Any, **envelope: Any) -> Envelope[Any]:
    """make_event, and no NaN or infinity anywhere: orjson would write null, silently."""
    try:
        env = make_event(payload, **envelope)
    except EventValidationError as e:
        raise non_finite(payload) or e from None  # a NaN reward reads as no reward
    reject_non_finite(payload)
    return env


def _mapping(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise EventValidationError(
            "wrong_type", f"expected an object, got {type(value).__name__}", path
        )
    return dict(value)


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


class AsyncProducer:
    def __init__(
        self,
        settings: Settings | None = None,
        *,
        bootstrap: str | None = None,
        producer_name: str | None = None,
        linger_ms: int = 5,
        request_timeout_ms: int = 15_000,
        delivery_timeout_ms: int = DELIVERY_TIMEOUT_MS,
    ) -> None:
        """``delivery_timeout_ms`` bounds each publish call (and ``start``) as a whole;
        ``request_timeout_ms`` is the client's bound on one request to the broker."""
        self.settings = settings or load()
        self._bootstrap = bootstrap or self.settings.bootstrap()
        self.producer_name = producer_name or self.settings.producer_name
        self._linger_ms = linger_ms
        self._request_timeout_ms = request_timeout_ms
        self._delivery_timeout = delivery_timeout_ms / 1000
        self._producer: AIOKafkaProducer | None = None

    @property
    def bootstrap(self) -> str:
        return self._bootstrap

    async def start(self) -> AsyncProducer:
        if self._producer is not None:
            return self
        # acks="all" and no idempotence: idempotent producers fail against the embedded broker.
        producer = AIOKafkaProducer(
            bootstrap_servers=self._bootstrap,
            acks="all",
            linger_ms=self._linger_ms,
            request_timeout_ms=self._request_timeout_ms,
            max_batch_size=256 * 1024,
            client_id=self.producer_name,
            **client_options(self.settings),
        )
        try:
            async with asyncio.timeout(self._delivery_timeout):
                await producer.start()
        except (KafkaError, TimeoutError) as e:
            await producer.stop()
            why = str(e) or f"no answer within {self._delivery_timeout:g} s"
            raise PublishError(f"cannot reach Kafka at {self._bootstrap}: {why}") from e
        self._producer = producer
        return self

    async def stop(self) -> None:
        if self._producer is not None:
            producer, self._producer = self._producer, None
            await producer.stop()

    async def __aenter__(self) -> AsyncProducer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def topic(self, env: Envelope[Any]) -> str:
        return topic_for_type(env.type).name(self.settings.topic_prefix)

    async def send(
        self, env: Envelope[Any], headers: Sequence[tuple[str, bytes]] = ()
    ) -> asyncio.Future[Any]:
        """Queue one event (``headers`` go next to the project's own, e.g. a recall's
        ``memstream-token``); the returned future resolves when the broker acknowledged it."""
        if self._producer is None:
            raise PublishError("producer is not started (use `async with AsyncProducer() as p:`)")
        try:
            future: asyncio.Future[Any] = await self._producer.send(
                self.topic(env), encode(env), key=env.key, headers=[*record_headers(env), *headers]
            )
            return future
        except KafkaError as e:
            raise PublishError(
                f"publish of {env.type} {env.event_id} to Kafka at {self._bootstrap} failed: {e}"
            ) from e

    async def publish(self, env: Envelope[Any], headers: Sequence[tuple[str, bytes]] = ()) -> str:
        return (await self.publish_many([env], headers=headers))[0]

    async def publish_many(
        self, envs: Iterable[Envelope[Any]], headers: Sequence[tuple[str, bytes]] = ()
    ) -> list[str]:
        """Send a batch (the client groups records per partition) and wait for every ack.

        Envelopes may be built by hand, so each is checked as an agent would decode it
        (an unknown version, a bad field): nothing is sent unless all of them are valid.
        """
        envs = list(envs)
        for env in envs:
            try:
                validated(env, self.settings.limits)
            except EventValidationError as e:
                raise non_finite(env.payload) or e from None
            reject_non_finite(env.payload)
            in_time(env, self.settings)
        return await self._publish(envs, headers)

    async def _publish(
        self, envs: list[Envelope[Any]], headers: Sequence[tuple[str, bytes]] = ()
    ) -> list[str]:
        """publish_many for events built by make_event (validated already)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._delivery_timeout
        futures: list[asyncio.Future[Any]] = []
        try:
            for env in envs:  # a send waits for metadata and buffer space: bounded as well
                futures.append(
                    await asyncio.wait_for(self.send(env, headers), deadline - loop.time())
                )
        except TimeoutError:
            pass
        if futures:
            # asyncio.wait, not wait_for: the client's futures are not cancelled on a timeout
            await asyncio.wait(futures, timeout=max(deadline - loop.time(), 0.0))
        unanswered = len(envs) - sum(1 for f in futures if f.done())
        for f in futures:
            if not f.done():  # a late answer is still read, so it is not reported as lost
                f.add_done_callback(_consume)
        if unanswered:
            raise PublishError(
                f"Kafka at {self._bootstrap} did not acknowledge {unanswered} of {len(envs)} "
                f"events within {self._delivery_timeout:g} s (broker down or unreachable?); "
                "they may or may not be stored, publishing them again is safe for turns"
            )
        failed = [(env, f.exception()) for env, f in zip(envs, futures, strict=True)]
        failed = [(env, err) for env, err in failed if err is not None]
        if failed:
            env, err = failed[0]
            raise PublishError(
                f"Kafka at {self._bootstrap} did not acknowledge {len(failed)} of {len(envs)} "
                f"events (first: {env.event_id}: {err})"
            )
        return [env.event_id for env in envs]

    # --- typed helpers -------------------------------------------------------------

    async def turn(
        self,
        *,
        namespace: str,
        session_id: str,
        turn_id: str,
        role: str,
        speaker: str,
        text: str,
        occurred_at: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        env = turn_event(
            namespace=namespace,
            session_id=session_id,
            turn_id=turn_id,
            role=role,
            speaker=speaker,
            text=text,
            occurred_at=occurred_at,
            metadata=metadata,
            producer=self.producer_name,
            settings=self.settings,
        )
        return await self._publish_one(env)

    async def access(
        self,
        *,
        namespace: str,
        query_id: str,
        memories: Sequence[tuple[str, float]],
        query: str | None = None,
        session_id: str | None = None,
        occurred_at: datetime | None = None,
        source: str = "recall",
        top_score: float | None = None,
    ) -> str:
        """Record that a recall returned ``memories`` ((memory_id, score) in rank order)."""
        try:
            ranked = [
                AccessedMemory(memory_id=m, rank=i + 1, score=s)
                for i, (m, s) in enumerate(memories)
            ]
        except (TypeError, ValueError):
            raise EventValidationError(
                "wrong_type", "expected a list of (memory_id, score) pairs", "payload.memories"
            ) from None
        if top_score is None:
            try:
                top_score = max((m.score for m in ranked), default=None)
            except TypeError:  # scores of mixed types: validation names the bad one
                top_score = None
        payload = MemoryAccessed(
            query_id=query_id, memories=ranked, query=query, top_score=top_score, source=source
        )
        return await self._publish_one(
            self._event(payload, namespace, session_id, occurred_at, correlation_id=query_id)
        )

    async def feedback(self, **kwargs: Any) -> str:
        """Publish a Feedback event (arguments as for ``feedback_event``)."""
        return await self._publish_one(self.feedback_event(**kwargs))

    def feedback_event(
        self,
        *,
        namespace: str,
        memory_ids: Sequence[str] = (),
        query_id: str | None = None,
        outcome: str | None = None,
        reward: float | None = None,
        reason: str | None = None,
        correction: str | None = None,
        session_id: str | None = None,
        occurred_at: datetime | None = None,
    ) -> Envelope[Any]:
        """The validated Feedback event, not published (the HTTP API checks its ids first)."""
        if isinstance(memory_ids, str | bytes) or not isinstance(memory_ids, Iterable):
            raise EventValidationError(
                "wrong_type",
                f"expected a list of memory ids, got {type(memory_ids).__name__}",
                "payload.memory_ids",
            )
        payload = Feedback(
            memory_ids=list(memory_ids),
            query_id=query_id,
            outcome=outcome,  # type: ignore[arg-type]  # validated by make_event
            reward=reward,
            reason=reason,
            correction=correction,
        )
        return self._event(payload, namespace, session_id, occurred_at, correlation_id=query_id)

    async def workflow(
        self,
        *,
        namespace: str,
        workflow: str,
        outcome: str,
        detail: str | None = None,
        evidence: Mapping[str, Any] | None = None,
        occurred_at: datetime | None = None,
    ) -> str:
        payload = WorkflowObserved(
            workflow=workflow,
            outcome=outcome,  # type: ignore[arg-type]  # validated by make_event
            detail=detail,
            evidence=_mapping(evidence, "payload.evidence"),
        )
        return await self._publish_one(self._event(payload, namespace, None, occurred_at))

    async def _publish_one(self, env: Envelope[Any]) -> str:
        return (await self._publish([env]))[0]

    def _event(
        self,
        payload: Any,
        namespace: str,
        session_id: str | None,
        occurred_at: datetime | None,
        correlation_id: str | None = None,
    ) -> Envelope[Any]:
        return in_time(
            _checked(
                payload,
                namespace=namespace,
                session_id=session_id,
                occurred_at=occurred_at,
                correlation_id=correlation_id,
                producer=self.producer_name,
                limits=self.settings.limits,
            ),
            self.settings,
        )


class Producer:
    """Synchronous facade: the same calls, blocking until the broker acknowledged."""

    def __init__(self, settings: Settings | None = None, **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="memstream-producer", daemon=True
        )
        self._thread.start()
        try:
            self._async = self._call(self._make(settings, kwargs))
        except BaseException:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
            self._loop.close()
            raise

    async def _make(self, settings: Settings | None, kwargs: dict[str, Any]) -> AsyncProducer:
        return await AsyncProducer(settings, **kwargs).start()

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def publish(self, env: Envelope[Any], headers: Sequence[tuple[str, bytes]] = ()) -> str:
        return self._call(self._async.publish(env, headers))

    def publish_many(
        self, envs: Iterable[Envelope[Any]], headers: Sequence[tuple[str, bytes]] = ()
    ) -> list[str]:
        return self._call(self._async.publish_many(list(envs), headers))

    def turn(self, **kwargs: Any) -> str:
        return self._call(self._async.turn(**kwargs))

    def access(self, **kwargs: Any) -> str:
        return self._call(self._async.access(**kwargs))

    def feedback(self, **kwargs: Any) -> str:
        return self._call(self._async.feedback(**kwargs))

    def workflow(self, **kwargs: Any) -> str:
        return self._call(self._async.workflow(**kwargs))

    def close(self) -> None:
        if self._loop.is_running():
            self._call(self._async.stop())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
            self._loop.close()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
