"""The importance spectrum: how much a stated fact matters, from trivial to flashbulb.

Pure: a function of the claim's category, what the extractor found in it (a slot that can
be asked about; something concrete: a name, a number, a date, an event of a life;
emphasis) and the four channels of the signal scan of the
claim as said (``core.signals.Importance``: novelty, arousal, reward, attention).

Each claim falls in a band by what it is, and the channels place it inside its band
(a noisy-OR of the channels, so one strong channel is enough and several compound):

================  =============  ==========================================================
band              range          claims
================  =============  ==========================================================
trivial           0.05 - 0.25    a plain fact with nothing concrete in it: no slot, name,
                                 number, date past "today" or life event ("the weather
                                 was nice today", "I had a sandwich")
ordinary          0.40 - 0.65    a concrete fact ("Lena starts at the hospital on 13
                                 May"), an entity, a skill
personal          0.50 - 0.80    a preference, a relationship, a moment
binding           0.60 - 0.85    a commitment, a decision, a principle
identity          0.70 - 0.95    a correction, or a fact in a known slot (name, job, home)
flashbulb         >= 0.90        arousal >= 0.8 (strong emotion), whatever the band
================  =============  ==========================================================

Emphasis ("really", "important", "never forget") counts as a channel of 0.5. The bands
leave a gap around the archival threshold (0.3): a trivial claim stays below it however
its channels read (the scan reads "lovely" as arousal 0.7), an ordinary one stays above.

Recall reads importance as one small score component; the bands keep the facts a question
asks about (concrete, slotted) where the extractor put them before (0.5 - 0.7) and move
only the trivia down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

FLASHBULB_AROUSAL: Final = 0.8  # same threshold as core.tagging and core.lifecycle
FLASHBULB_FLOOR: Final = 0.9
EMPHASIS: Final = 0.5

TRIVIAL: Final = (0.05, 0.25)
ORDINARY: Final = (0.40, 0.65)
PERSONAL: Final = (0.50, 0.80)
BINDING: Final = (0.60, 0.85)
IDENTITY: Final = (0.70, 0.95)

_BANDS: Final[dict[str, tuple[float, float]]] = {
    "entity": ORDINARY,
    "skill": ORDINARY,
    "preference": PERSONAL,
    "relationship": PERSONAL,
    "moment": PERSONAL,
    "commitment": BINDING,
    "decision": BINDING,
    "principle": BINDING,
    "correction": IDENTITY,
}


@dataclass(frozen=True, slots=True)
class Channels:
    """The signal scan's channels of a claim, each in [0, 1] (``signals.Importance``)."""

    novelty: float = 0.0
    arousal: float = 0.0
    reward: float = 0.0
    attention: float = 0.0


def _unit(x: float) -> float:
    return 0.0 if not x > 0.0 else 1.0 if x > 1.0 else x  # NaN reads as 0


def band(category: str, *, has_slot: bool, concrete: bool) -> tuple[float, float]:
    """The (low, high) range a claim of this shape falls in."""
    if has_slot:
        return IDENTITY
    found = _BANDS.get(category)
    if found is not None:
        return found
    return ORDINARY if concrete else TRIVIAL


def strength(channels: Channels, *, emphasis: bool = False) -> float:
    """Noisy-OR of the channels (and emphasis): where inside its band a claim sits."""
    keep = 1.0 - (EMPHASIS if emphasis else 0.0)
    for c in (channels.novelty, channels.arousal, channels.reward, channels.attention):
        keep *= 1.0 - _unit(c)
    return 1.0 - keep


def spectrum(
    category: str,
    channels: Channels,
    *,
    has_slot: bool = False,
    concrete: bool = False,
    emphasis: bool = False,
) -> float:
    """Importance in [0, 1], rounded to 3 places; non-decreasing in every channel."""
    low, high = band(category, has_slot=has_slot, concrete=concrete)
    value = low + (high - low) * strength(channels, emphasis=emphasis)
    if _unit(channels.arousal) >= FLASHBULB_AROUSAL:
        value = max(value, FLASHBULB_FLOOR)
    return round(min(max(value, 0.0), 1.0), 3)
