"""A bare "instead" at a clause's end says what it replaced (core/extract/claims.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.extract.claims import instead_of, user_claims
from tests.planning import planned


def test_a_bare_instead_names_what_the_clause_before_gave_up() -> None:
    assert instead_of("I swim instead", "I stopped playing tennis") == "I swim instead of tennis"
    assert instead_of("I drink tea instead now", "I quit coffee") == (
        "I drink tea now instead of coffee"
    )
    # nothing given up before it, or "instead of" said already: as said
    assert instead_of("I swim instead", "I hurt my shoulder") == "I swim instead"
    assert instead_of("I chose tea instead of coffee", "I quit soda") == (
        "I chose tea instead of coffee"
    )


def test_the_clause_or_the_sentence_before_is_read() -> None:
    said = [c.text for c in user_claims("I stopped playing tennis; I swim instead.", frozenset())]
    assert said[-1].startswith("I swim instead of tennis"), said
    said = [c.text for c in user_claims("I swim instead.", frozenset(), "I quit tennis.")]
    assert said == ["I swim instead of tennis"], said


def test_the_memory_supersedes_what_was_replaced() -> None:
    memory, log = planned(["I play tennis on weekends.", "I quit tennis. I swim instead."])
    edges = {
        memory.states[e.payload.memory_id].text: memory.states[e.payload.target_id].text
        for e in log
        if e.type == "RelationAdded" and e.payload.relation == "supersedes"
    }
    assert edges.get("Sam swims instead of tennis") == "Sam plays tennis on weekends", edges


@given(st.text(max_size=60), st.text(max_size=60))
def test_any_clause_keeps_its_words_before_instead(body: str, before: str) -> None:
    out = instead_of(body, before)
    assert out == body or out.startswith(body[: body.casefold().rfind("instead")])
