"""Offset commits that never pass a message the agents still hold.

faust commits, per partition, the first run of consecutive acknowledged offsets
(``Consumer._new_offset``): it assumes messages are acknowledged in offset order. The write
path does not do that: a turn in a session buffer stays un-acknowledged until its memory
events are durable, while turns of other sessions on the same partition are acknowledged
as soon as theirs are. faust then commits past the held turn (its test for an
un-acknowledged head compares with the committed offset one off, and is skipped while
nothing has been committed yet), so after a crash the restarted worker resumes behind the
held turn and never reads it again: the turn is lost.

This consumer caps every commit at the lowest offset it still tracks as un-acknowledged.
It also tracks them in a plain set where faust uses a ``WeakSet``: a held message that
nothing else references any more (the rest of a batch cut short by a stop) would vanish
from a weak set, and the next commit would pass it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from faust.transport.drivers.aiokafka import Consumer
from faust.types.tuples import ack_lock


def first_held(messages: Any, tp: Any) -> int | None:
    """The lowest offset of ``tp`` among tracked messages that are not acknowledged yet."""
    with ack_lock:  # acknowledgements change ``acked`` under this lock
        return min((m.offset for m in list(messages) if m.tp == tp and not m.acked), default=None)


@contextmanager
def held(messages: Sequence[Any], consumer: Any) -> Iterator[None]:
    """Hold ``messages`` (un-acknowledged) while the block runs, and release them only when
    it completes: faust acknowledges the records a stream hands out when its loop is left,
    also when a stop cancels the step half-way, and they would then be committed unhandled.
    A block left by an exception (a cancelled step) keeps them held: they are read again."""
    for message in messages:
        message.incref()
    yield
    for message in messages:
        message.ack(consumer)


class HeldOffsetsConsumer(Consumer):  # type: ignore[misc]  # faust is untyped here
    """faust's aiokafka consumer, except that a commit stops before the first held message."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # strong references: a message leaves when it is acknowledged (faust's ``ack``
        # discards it; ``force_commit`` sweeps the rest) or when its partition is revoked
        self._unacked_messages: set[Any] = set()

    async def force_commit(self, *args: Any, **kwargs: Any) -> bool:
        self._clean_unacked_messages()  # acknowledged ones faust's ``ack`` left in the set
        done: bool = await super().force_commit(*args, **kwargs)
        return done

    async def on_partitions_revoked(self, revoked: Any) -> None:
        # the new owner reads them again; nothing here may commit them any more
        with ack_lock:
            self._unacked_messages -= {m for m in self._unacked_messages if m.tp in revoked}
        await super().on_partitions_revoked(revoked)

    def _new_offset(self, tp: Any) -> int | None:
        held = first_held(self._unacked_messages, tp)
        acked: list[int] = self._acked[tp]
        later = [o for o in acked if held is not None and o >= held]
        if not later:
            offset: int | None = super()._new_offset(tp)
            return offset
        # faust computes the commit from the acknowledged offsets before the held one; the
        # later ones stay acknowledged for a commit once the held message is released.
        acked[:] = [o for o in acked if o < held]  # type: ignore[operator]
        try:
            offset = super()._new_offset(tp)
        finally:
            acked.extend(later)
            acked.sort()
        return offset


def install(app: Any) -> None:
    """Make ``app`` create its consumer from :class:`HeldOffsetsConsumer`."""
    app.transport.Consumer = HeldOffsetsConsumer
