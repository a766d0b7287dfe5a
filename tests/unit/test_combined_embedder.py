"""A combination of embedders is one embedder whose cosine is the weighted sum of its parts'."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.combined_embedder import CombinedEmbedder, parse_parts
from memstream.core.embedding import HashingEmbedder, embedder_for

A, B = HashingEmbedder(64), HashingEmbedder(96)
WORDS = st.sampled_from(
    ["porto", "nurse", "climbing", "wall", "gym", "daughter", "lisbon", "hospital", "knit", "yarn"]
)
TEXTS = st.lists(WORDS, min_size=1, max_size=6).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(TEXTS, TEXTS, st.floats(0.05, 0.95))
def test_cosine_is_the_weighted_sum_of_the_parts(x: str, y: str, w: float) -> None:
    both = CombinedEmbedder([(A, w), (B, 1 - w)])
    cx, cy = both.embed([x, y])
    ax, ay = A.embed([x, y])
    bx, by = B.embed([x, y])
    expected = w * float(ax @ ay) + (1 - w) * float(bx @ by)
    assert float(cx @ cy) == pytest.approx(expected, abs=1e-5)
    assert np.linalg.norm(cx) == pytest.approx(1.0, abs=1e-5)


def test_weights_are_normalised_and_named() -> None:
    both = CombinedEmbedder([(A, 3.0), (B, 1.0)])
    assert both.weights == (0.75, 0.25)
    assert both.dim == 160
    assert both.name == "hashingx0.75+hashingx0.25"
    # weights that round alike are still two names (two collections)
    a = CombinedEmbedder([(A, 0.3331), (B, 0.6669)]).name
    assert a != CombinedEmbedder([(A, 0.3334), (B, 0.6666)]).name
    assert both.embed([]).shape == (0, 160)
    with pytest.raises(TypeError):
        both.embed("one string")  # type: ignore[arg-type]


def test_configuration_builds_a_combination() -> None:
    e = embedder_for("wordllama:0.7+hashing:0.3")
    assert isinstance(e, CombinedEmbedder)
    assert e.dim == 256 + 384
    assert e.weights == pytest.approx((0.7, 0.3))


@pytest.mark.parametrize(
    ("spec", "named"),
    [("hashing:x+wordllama", "'x'"), ("hashing:0+wordllama", "'hashing'"), ("+hashing", "empty")],
)
def test_a_bad_combination_names_its_part(spec: str, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        parse_parts(spec)


def test_a_model_or_dimension_for_a_combination_is_refused() -> None:
    with pytest.raises(ValueError, match="each part's default"):
        embedder_for("wordllama:0.7+hashing:0.3", dim=128)


def test_one_part_is_not_a_combination() -> None:
    with pytest.raises(ValueError, match="two"):
        CombinedEmbedder([(A, 1.0)])
    assert parse_parts("hashing") == [("hashing", 1.0)]
