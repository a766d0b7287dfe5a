"""The namespace index keeps each memory's vector: the dream cycle reads it instead of
embedding every memory again."""

from __future__ import annotations

import numpy as np

from memstream.core.embedding import HashingEmbedder
from tests.unit.test_write_plan import run


def test_stored_vectors_are_the_current_texts_vectors() -> None:
    memory, _log = run(["I live in Porto.", "I prefer green tea.", "Actually I live in Lisbon."])
    embedder = HashingEmbedder()
    assert memory.states
    for mid, state in memory.states.items():
        expected = embedder.embed([state.text])[0]
        assert np.allclose(memory.vector(mid), expected, atol=1e-6)
