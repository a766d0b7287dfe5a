"""Property tests for the signal scanner: total, bounded, deterministic, evidence verbatim."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.signal_patterns import HITS
from memstream.core.signals import Level, SignalRecord, scan

# Random text alone rarely spells a cue, so also build turns from table spellings, names,
# numbers and noise, joined by the separators the scanner cares about.
_SPELLINGS = sorted(HITS)[::7]  # a spread-out sample keeps the strategy small
_WORDS = st.one_of(
    st.sampled_from(_SPELLINGS),
    st.sampled_from(
        ["the", "and", "Ana", "Lisbon", "TOML", "NEVER", "3", "2024-06-12", "5pm", "in"]
    ),
    st.sampled_from(["<system>", "```", "ignore previous instructions", "/help", "😡", "’", "İ"]),
    st.text(max_size=8),
)
_SEPARATORS = st.sampled_from([" ", "  ", "\n", ", ", ". ", "! ", '"', "(", "\t", ""])


@st.composite
def turns(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(_WORDS, _SEPARATORS), max_size=40))
    text = "".join(w + s for w, s in parts)
    return draw(st.sampled_from([text, text.upper(), text.lower(), text.title()]))


_ANY_TEXT = st.one_of(st.text(), turns())
_ROLES = st.sampled_from(["user", "assistant", "system", "tool"])


def _check_bounds(record: SignalRecord) -> None:
    imp = record.importance
    for value in (imp.novelty, imp.arousal, imp.reward, imp.attention, imp.combined):
        assert 0.0 <= value <= 1.0
    assert -1.0 <= record.emotion.valence <= 1.0
    assert 0.0 <= record.emotion.arousal <= 1.0
    d = record.density
    for value in (d.content_share, d.entity_share, d.number_share, d.score):
        assert 0.0 <= value <= 1.0


@settings(max_examples=300, deadline=None)
@given(_ANY_TEXT, _ROLES)
def test_scan_never_raises_and_stays_in_bounds(text: str, role: str) -> None:
    record = scan(text, role=role)
    assert isinstance(record.level, Level)
    assert record.length == len(text)
    assert record.reasons
    _check_bounds(record)


@settings(max_examples=300, deadline=None)
@given(_ANY_TEXT)
def test_evidence_and_entities_quote_the_input(text: str) -> None:
    record = scan(text)
    for e in record.evidence:
        assert e.text and e.text in text
    for ent in record.entities:
        assert ent.text and ent.text in text


@settings(max_examples=200, deadline=None)
@given(_ANY_TEXT, _ROLES)
def test_scan_is_deterministic(text: str, role: str) -> None:
    first, second = scan(text, role=role), scan(text, role=role)
    assert first == second
    assert first.to_dict() == second.to_dict()


@settings(max_examples=200, deadline=None)
@given(_ANY_TEXT)
def test_to_dict_round_trips_through_json(text: str) -> None:
    data = scan(text).to_dict()
    assert orjson.loads(orjson.dumps(data)) == data


@settings(max_examples=200, deadline=None)
@given(_ANY_TEXT)
def test_level_agrees_with_filters_and_reasons(text: str) -> None:
    record = scan(text)
    if record.filters:
        assert record.level is Level.SKIP
    elif record.level is Level.HIGH:
        assert set(record.reasons) <= {
            "correction",
            "decision",
            "commitment",
            "strong_preference",
            "fact",
            "high_importance",
        }
    else:
        assert record.level is Level.NORMAL
