"""A turn that shares a photo: its caption is read from the metadata or a marker in the
text, and the memory keeps what the photo shows with what was said around it, dated."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.core.extract.images import caption_of, shown, without_markers
from memstream.core.facts import TurnView
from memstream.core.rule_extractor import extract_rules
from memstream.core.signals import scan
from memstream.core.write_plan import BufferedTurn, source_text

T0 = datetime(2023, 5, 8, 18, tzinfo=UTC)


@pytest.mark.parametrize(
    ("metadata", "text", "caption"),
    [
        ({"image_caption": "a photo of a dog"}, "Look!", "a photo of a dog"),
        ({"blip_caption": "a cake with candles."}, "", "a cake with candles"),
        ({}, "Look! [shares a photo of a red bike]", "a red bike"),
        ({}, "[image: two cats on a sofa] so cute", "two cats on a sofa"),
        ({"image_caption": 3}, "no marker here", None),
        (None, "plain text", None),
    ],
)
def test_caption_of(metadata: dict[str, object] | None, text: str, caption: str | None) -> None:
    assert caption_of(metadata, text) == caption


def test_markers_leave_the_text_and_captions_become_noun_phrases() -> None:
    assert without_markers("Look! [shares a photo of a red bike] Mine now.") == "Look!   Mine now."
    assert shown("a photo of a dog sitting on a couch") == "a dog sitting on a couch"
    assert shown("sunset") == "sunset"


@given(
    st.dictionaries(st.text(max_size=12), st.one_of(st.text(), st.integers(), st.none())), st.text()
)
def test_caption_of_never_raises(metadata: dict[str, object], text: str) -> None:
    found = caption_of(metadata, text)
    assert found is None or (found.strip() and len(found) <= 200)


def test_the_photo_memory_keeps_what_was_said_with_it() -> None:
    turn = TurnView(
        turn_id="t1",
        role="user",
        speaker="Melanie",
        text="So good! We went there last weekend. This is my favorite spot.",
        occurred_at=T0,
        image_caption="a photo of a sunset over a lake",
    )
    texts = [f.text for f in extract_rules([turn])]
    assert texts[0] == (
        "Melanie shared a photo of a sunset over a lake on 8 May 2023: Melanie and others went "
        "there on the weekend of 6 May 2023. This is Melanie's favorite spot."
    )
    assert "The sunset over a lake is Melanie's favorite spot" in texts


def test_a_short_turn_with_a_photo_is_not_skipped_and_its_caption_is_indexed() -> None:
    signal = scan("Nice!", role="user")
    assert signal.level == "SKIP"
    plain = BufferedTurn("e1", "t1", "user", "Mel", "Nice!", T0, signal)
    shared = BufferedTurn("e1", "t1", "user", "Mel", "Nice!", T0, signal, "a photo of a red bike")
    assert plain.skipped and not shared.skipped
    assert source_text([shared]) == "Nice! (a photo of a red bike)"
    assert shared.view("s1").image_caption == "a photo of a red bike"
