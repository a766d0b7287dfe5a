from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.hashing import content_hash, normalize


def test_normalize_folds_case_punctuation_and_space() -> None:
    assert normalize("  User PREFERS   dark-roast coffee!! ") == "user prefers dark roast coffee"
    assert normalize("Straße") == normalize("STRASSE")


def test_hash_is_per_namespace() -> None:
    assert content_hash("a", "User likes tea.") == content_hash("a", "user likes TEA")
    assert content_hash("a", "User likes tea.") != content_hash("b", "User likes tea.")


@given(st.text())
def test_normalize_is_idempotent(text: str) -> None:
    assert normalize(normalize(text)) == normalize(text)


@given(st.text(), st.sampled_from([str.upper, str.lower, lambda s: s + "!", lambda s: f"  {s} "]))
def test_hash_ignores_surface_changes(text: str, change) -> None:  # type: ignore[no-untyped-def]
    if normalize(change(text)) == normalize(text):
        assert content_hash("n", change(text)) == content_hash("n", text)
