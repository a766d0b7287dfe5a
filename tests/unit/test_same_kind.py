"""Another of a kind kept one at a time, said as a change, supersedes the one named before
(core/same_kind.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.relations import Known, NewMemory
from memstream.core.same_kind import RULE, kinds_named, others_of, same_kind_proposals
from tests.planning import planned


def _new(text: str, subject: str | None = "maya") -> NewMemory:
    return NewMemory("new", text, subject, ())


def test_a_change_to_another_of_the_kind_supersedes_the_one_before() -> None:
    earlier = [
        Known("a", "Maya uses an iPhone 12", "maya"),
        Known("b", "Maya's password manager is LastPass", "maya"),
        Known("c", "Ana uses a Pixel 6", "ana"),  # someone else's
    ]
    (edge,) = same_kind_proposals(_new("Maya upgraded to a Pixel 8"), earlier)
    assert (edge.target, edge.rule, edge.evidence) == (
        "a",
        RULE,
        {"kind": "phone", "was": "iphone", "now": "pixel"},
    )
    (edge,) = same_kind_proposals(
        _new("After the breach Maya migrated everything to Bitwarden"), earlier
    )
    assert edge.target == "b" and edge.evidence["kind"] == "password manager"


def test_no_change_said_or_the_same_thing_named_writes_no_edge() -> None:
    earlier = [Known("a", "Maya uses an iPhone 12", "maya")]
    assert same_kind_proposals(_new("Maya's friend has a Pixel 8"), earlier) == []
    assert same_kind_proposals(_new("Maya now has a new case for the iPhone"), earlier) == []
    assert same_kind_proposals(_new("Should Maya switch to a Pixel?"), earlier) == []


def test_names_of_two_words_and_the_others_of_the_kind() -> None:
    assert kinds_named("These days Maya mostly codes in VS Code") == {
        "editor": frozenset({"vs code"})
    }
    others = others_of("Maya switched to Neovim")
    assert "VS Code" in others and "Emacs" in others and "Neovim" not in others


def test_the_plan_writes_the_edge_though_the_old_memory_is_not_near() -> None:
    memory, log = planned(
        [
            "I use an iPhone 12.",
            "The weather was nice.",
            "I watched a movie about whales.",
            "I upgraded to a Pixel 8 last week.",
        ]
    )
    edges = [e.payload for e in log if e.type == "RelationAdded" and e.payload.rule == RULE]
    assert [(memory.states[e.memory_id].text, memory.states[e.target_id].text) for e in edges] == [
        ("Sam upgraded to a Pixel 8 in the week before 4 March 2024", "Sam uses an iPhone 12")
    ]


@given(st.text(max_size=60), st.lists(st.text(max_size=40), max_size=4))
def test_any_text_gives_edges_only_to_earlier_memories_of_the_speaker(
    text: str, olds: list[str]
) -> None:
    earlier = [Known(f"k{i}", t, "maya") for i, t in enumerate(olds)]
    for p in same_kind_proposals(_new(text), earlier):
        assert p.source == "new" and p.target.startswith("k") and p.relation == "supersedes"


def test_a_programming_language_is_named_as_written() -> None:
    assert kinds_named("Maya will go to the gym") == {}
    assert kinds_named("Maya's favorite language is Go") == {
        "programming language": frozenset({"go"})
    }
    earlier = [Known("a", "Maya's favorite language is Go", "maya")]
    (edge,) = same_kind_proposals(_new("Maya has switched to Rust for everything"), earlier)
    assert edge.target == "a" and edge.evidence["now"] == "rust"


def test_a_tracker_of_two_words_is_one_name() -> None:
    assert kinds_named("Maya got an Apple Watch for her birthday") == {
        "fitness tracker": frozenset({"apple watch"})
    }
