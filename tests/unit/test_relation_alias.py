"""Relations a question names, resolved to the names the memories give them
(core/relation_alias.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.relation_alias import MAX_REWRITES, Alias, aliases, rewrites

FAMILY = [
    "Three: Rosa, Rosa's husband Marcus, and Rosa's son Eli, who just turned two",
    "Lena's little sister Ines set her wedding date",
    "Jules's dog, Comet, sleeps all day",
    "Owen's neighbor is called Beth",
    "Rosa's mom will understand",  # no name: no alias
    "Rosa's husband And the kids",  # a clause word is not a name
]


def test_aliases_read_owner_relation_and_name() -> None:
    found = {(a.owner, a.relation, a.name) for a in aliases(FAMILY)}
    assert found == {
        ("Rosa", "husband", "Marcus"),
        ("Rosa", "son", "Eli"),
        ("Lena", "sister", "Ines"),
        ("Jules", "dog", "Comet"),
        ("Owen", "neighbor", "Beth"),
    }


def test_rewrites_put_the_name_in_the_relation_s_place() -> None:
    known = aliases(FAMILY)
    [r] = rewrites("What does Rosa's husband do for a living?", known)
    assert (r.mention, r.name, r.query) == (
        "Rosa's husband",
        "Marcus",
        "What does Marcus do for a living?",
    )
    [r] = rewrites("Would Rosa like a picture book for her son?", known)
    assert r.query == "Would Rosa like a picture book for Eli?"
    assert rewrites("What does Lena's husband do?", known) == []  # unknown for that owner
    assert rewrites("Where did Marcus and Rosa's husband go?", known) == []  # already named


def test_a_pronoun_resolves_only_when_one_name_fits() -> None:
    known = [Alias("Ana", "sister", "Eva"), Alias("Bo", "sister", "Ida")]
    assert rewrites("Where does my sister live?", known) == []
    assert rewrites("Where does Bo's sister live?", known)[0].name == "Ida"


@given(st.lists(st.sampled_from(["husband", "son", "sister", "dog", "boss"]), max_size=6))
def test_rewrites_are_bounded_and_drop_the_mention(relations: list[str]) -> None:
    known = [Alias("Rosa", rel, f"N{rel.capitalize()}") for rel in relations]
    query = "Did Rosa's husband meet Rosa's son and Rosa's boss?"
    out = rewrites(query, known)
    assert len(out) <= MAX_REWRITES
    for r in out:
        assert r.mention not in r.query and r.name in r.query
