"""Property tests for the importance spectrum: bounded, monotone in every channel."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.importance import FLASHBULB_AROUSAL, FLASHBULB_FLOOR, Channels, spectrum

CATEGORIES = st.sampled_from(
    [
        "fact",
        "entity",
        "skill",
        "preference",
        "relationship",
        "moment",
        "commitment",
        "decision",
        "principle",
        "correction",
        "unknown",
    ]
)
UNIT = st.floats(0.0, 1.0)
ANY = st.floats(allow_nan=True, allow_infinity=True)
CHANNELS = st.builds(Channels, UNIT, UNIT, UNIT, UNIT)
FIELDS = ("novelty", "arousal", "reward", "attention")


@given(CATEGORIES, st.builds(Channels, ANY, ANY, ANY, ANY), st.booleans(), st.booleans())
def test_bounded(category: str, channels: Channels, slot: bool, concrete: bool) -> None:
    value = spectrum(category, channels, has_slot=slot, concrete=concrete)
    assert 0.0 <= value <= 1.0


@given(
    CATEGORIES,
    CHANNELS,
    st.sampled_from(FIELDS),
    UNIT,
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_monotone_in_each_channel(
    category: str,
    channels: Channels,
    name: str,
    more: float,
    slot: bool,
    concrete: bool,
    emphasis: bool,
) -> None:
    raised = Channels(
        **{
            f: max(getattr(channels, f), more) if f == name else getattr(channels, f)
            for f in FIELDS
        }
    )
    kw = {"has_slot": slot, "concrete": concrete, "emphasis": emphasis}
    assert spectrum(category, raised, **kw) >= spectrum(category, channels, **kw)


@given(CATEGORIES, CHANNELS, st.booleans(), st.booleans())
def test_emphasis_and_flashbulb_never_lower(
    category: str, channels: Channels, slot: bool, concrete: bool
) -> None:
    plain = spectrum(category, channels, has_slot=slot, concrete=concrete)
    assert spectrum(category, channels, has_slot=slot, concrete=concrete, emphasis=True) >= plain
    if channels.arousal >= FLASHBULB_AROUSAL:
        assert plain >= FLASHBULB_FLOOR
