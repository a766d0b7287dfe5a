"""Names a question asks about that no memory holds (core.recall_gate.unknown_names): a
question only about them asks about what was never said."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.recall_gate import asked_names, unknown_names

DOCS = ["Maya went hiking in the Dolomites with her sister Clara", "The Okafor family moved"]


def test_a_name_no_document_holds_is_unknown() -> None:
    assert unknown_names(["Rui"], DOCS) == ("Rui",)
    assert unknown_names(["Clara", "Rui"], DOCS) == ("Rui",)
    assert unknown_names(["clara"], DOCS) == ()  # case folded
    assert unknown_names([], DOCS) == () and unknown_names(["Rui"], []) == ("Rui",)
    # two names the finder joined are known when each is; a full name when all of it is
    assert unknown_names(["Clara Dolomites", "Maya Okafor"], DOCS) == ()
    assert unknown_names(["Rui Okafor"], DOCS) == ("Rui Okafor",)


def test_a_short_form_plural_or_possessive_finds_the_name() -> None:
    assert unknown_names(["Mel"], ["Melanie paints"]) == ()
    assert unknown_names(["the Okafors", "Okafors", "Clara's"], DOCS) == ()
    # a long name by its start: another form of it ("Postgres" for "PostgreSQL")
    assert unknown_names(["PostgreSQL"], ["We run Postgres 16"]) == ()
    assert unknown_names(["Kubernetes"], ["We run Postgres 16"]) == ("Kubernetes",)
    # inside another word is no mention: "Ana" is not in "Banana"
    assert unknown_names(["Ana"], ["a banana bread recipe"]) == ("Ana",)


def test_months_and_weekdays_are_times_not_names() -> None:
    assert asked_names(["May", "Tuesdays", "Rui", "Monday's"]) == ("Rui",)
    assert asked_names(["Christmas", "Docker"]) == ("Christmas", "Docker")


name = st.text(st.characters(categories=["Lu", "Ll"]), min_size=1, max_size=12)


@given(name, st.lists(st.text(max_size=30), max_size=4))
def test_a_name_said_in_a_document_is_never_unknown(n: str, others: list[str]) -> None:
    assert unknown_names([n], [*others, f"we met {n} yesterday"]) == ()


@given(st.lists(name, max_size=5), st.lists(st.text(max_size=40), max_size=5))
def test_unknown_names_are_a_subset_in_order(names: list[str], docs: list[str]) -> None:
    out = unknown_names(names, docs)
    assert list(out) == [n for n in names if n in out]
