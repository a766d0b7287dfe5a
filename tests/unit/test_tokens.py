"""The shared tokenizer: normalisation, word boundaries, stopwords, light stemming."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.core.tokens import ENGLISH_STOPWORDS, Tokenizer, light_stem, tokenize


def test_lowercases_and_splits_on_non_word_characters() -> None:
    assert tokenize("Kafka-Topics, DuckDB & Qdrant!") == ["kafka", "topics", "duckdb", "qdrant"]


def test_unicode_is_normalised_and_kept() -> None:
    # NFKC folds the full-width letters and the ligature; casefold handles ß.
    assert tokenize("ＡＢＣ ﬁle Straße Café 東京") == ["abc", "file", "strasse", "café", "東京"]


def test_underscore_splits_and_apostrophes_join() -> None:
    assert tokenize("favourite_color") == ["favourite", "color"]
    assert tokenize("don't can’t user's") == ["dont", "cant", "users"]


def test_stopwords_removed_but_negations_kept() -> None:
    assert tokenize("The user does not like the coffee") == ["user", "not", "like", "coffee"]
    assert {"not", "no", "never", "nor"}.isdisjoint(ENGLISH_STOPWORDS)
    assert Tokenizer(remove_stopwords=False)("the user") == ["the", "user"]


def test_numbers_are_tokens_and_overlong_tokens_dropped() -> None:
    assert tokenize("room 101 in 2024") == ["room", "101", "2024"]
    assert tokenize("x" * 65 + " ok") == ["ok"]
    assert Tokenizer(max_len=3)("abcd abc") == ["abc"]


def test_empty_and_punctuation_only() -> None:
    assert tokenize("") == []
    assert tokenize(" -- !!! ...") == []


@pytest.mark.parametrize(
    ("words", "stem"),
    [
        (["like", "likes", "liked", "liking"], "lik"),
        (["run", "runs", "running"], "run"),
        (["preference", "preferences"], "preferenc"),
        (["box", "boxes"], "box"),
        (["class", "classes"], "class"),
        (["city", "cities"], "city"),
    ],
)
def test_light_stem_conflates_inflections(words: list[str], stem: str) -> None:
    assert {light_stem(w) for w in words} == {stem}


@pytest.mark.parametrize("word", ["bus", "this", "thing", "string", "fall", "2024", "東京", "ab"])
def test_light_stem_leaves_other_words_alone(word: str) -> None:
    assert light_stem(word) == word


def test_stemming_is_optional() -> None:
    assert tokenize("liked meetings") == ["liked", "meetings"]
    assert tokenize("liked meetings", stem=True) == ["lik", "meet"]


def test_version_names_the_configuration() -> None:
    assert Tokenizer().version != Tokenizer(stem=True).version
    assert Tokenizer().version != Tokenizer(remove_stopwords=False).version


@given(st.text(max_size=200))
def test_tokens_are_lowercase_words(text: str) -> None:
    for token in tokenize(text, stem=True):
        assert token
        assert token == token.casefold() or not token.isascii()
        assert not any(c.isspace() for c in token)
        assert "_" not in token
    assert tokenize(text) == tokenize(text)
