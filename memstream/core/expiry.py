"""Which memories a recall reaches by status: pure.

A memory superseded by a newer one (a move, a changed preference) answers history
questions only. One that expired with nothing to replace it (a task 90 days past due, a
state past its ``valid_until``: the dream cycle's ``stale_commitment`` and
``valid_until_passed``) is still the latest known about its subject, so a question in the
present reaches it as well; its validity (``core.scoring``) is 0, which ranks it below what
holds now.
"""

from __future__ import annotations

from collections.abc import Collection

from memstream.core.memory_state import MemoryState


def expired_alone(state: MemoryState) -> bool:
    """Over with nothing newer in its place."""
    return state.status == "superseded" and state.superseded_by is None


def reachable(state: MemoryState, statuses: Collection[str]) -> bool:
    """A recall asking for ``statuses`` reaches ``state``: one of them, or expired alone."""
    return state.status in statuses or expired_alone(state)
