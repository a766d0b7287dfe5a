"""What a speaker says they are in passing becomes a claim of its own
(core/extract/self_description.py), and only that."""

from __future__ import annotations

import pytest

from memstream.core.extract.self_description import self_descriptions
from tests.unit.test_rule_extractor import facts


@pytest.mark.parametrize(
    ("sentence", "claims"),
    [
        ("As a nurse, I often work night shifts, so what should I eat?", ["I am a nurse"]),
        ("As a transgender woman, I found the group helpful.", ["I am a transgender woman"]),
        (
            "As a freelance graphic designer, my income varies.",
            ["I am a freelance graphic designer"],
        ),
        ("As a mom of two, I rarely sleep.", ["I am a mom of two"]),
        (
            "which seems crucial for my growth as a 44-year-old colour technologist from "
            "Port Michael?",
            ["I am a 44-year-old colour technologist from Port Michael"],
        ),
        # circumstances, times of life, favours, things: no role
        ("As a result, I missed the bus.", []),
        ("As a kid, I loved trains.", []),
        ("As a side note, I moved.", []),
        ("As a matter of fact, I moved.", []),
        ("I use my old phone as a 10-year-old backup.", []),
        # about someone else, or nobody
        ("As a nurse, she works nights.", []),
        ("The hotel was rated as a 5-year-old favourite by the guide.", []),
    ],
)
def test_roles_said_in_passing(sentence: str, claims: list[str]) -> None:
    assert self_descriptions(sentence) == claims


def test_the_role_is_a_memory_beside_the_sentence_s_own() -> None:
    texts = [f.text for f in facts("As a nurse, I often work night shifts, so what should I eat?")]
    assert "User is a nurse" in texts and "User often works night shifts" in texts, texts
