from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.gate import GateConfig, Neighbour, decide, reinforced_stability
from memstream.core.merge import covers, merge_texts

CFG = GateConfig()


def near(sim: float) -> Neighbour:
    return Neighbour("m1", sim, "old text")


def test_bands() -> None:
    assert decide(None, None, CFG).action == "create"
    assert decide(near(0.2), None, CFG).action == "create"
    assert decide(near(0.72), None, CFG).reason.startswith("borderline")
    assert decide(near(0.80), None, CFG).action == "update"
    assert decide(near(0.75), None, CFG).action == "update"
    assert decide(near(0.92), None, CFG).action == "update"
    assert decide(near(0.93), None, CFG).action == "reinforce"


def test_slot_holder_wins() -> None:
    holder = Neighbour("m2", 0.5, "Ann lives in Boston")
    d = decide(near(0.99), holder, CFG)
    assert (d.action, d.target_id) == ("supersede", "m2")
    assert decide(near(0.1), holder, CFG, refines_slot=True).action == "update"
    assert decide(None, Neighbour("m2", 0.95, "x"), CFG).action == "reinforce"


def test_evidence_names_the_closest_memory() -> None:
    ev = decide(near(0.8), None, CFG).evidence()
    assert ev == {
        "decision": "update",
        "closest_memory_id": "m1",
        "similarity": 0.8,
        "reason": ev["reason"],
    }


@given(st.floats(0, 1), st.floats(0, 1))
def test_more_similar_never_means_more_novel(a: float, b: float) -> None:
    order = {"create": 0, "update": 1, "reinforce": 2}
    lo, hi = sorted((a, b))
    assert order[decide(near(lo), None, CFG).action] <= order[decide(near(hi), None, CFG).action]


@given(st.floats(0, 1000))
def test_stability_grows_but_is_capped(s: float) -> None:
    after = reinforced_stability(s, CFG)
    assert after >= min(s, CFG.max_stability) and after <= CFG.max_stability


def test_merge_keeps_detail() -> None:
    assert (
        merge_texts("Ann likes tea", "Ann likes green tea in the morning")
        == "Ann likes green tea in the morning"
    )
    assert (
        merge_texts("Ann likes green tea in the morning", "Ann likes tea")
        == "Ann likes green tea in the morning"
    )
    assert merge_texts("Ann likes tea.", "Ann plays chess") == "Ann likes tea; Ann plays chess"
    assert covers("Ann's editor is Vim and she uses it daily", "Ann's editor is Vim")
    assert not covers("Ann's editor is Emacs", "Ann's editor is Vim")


@given(st.text(max_size=60), st.text(max_size=60))
def test_merge_never_loses_the_old_text_words(old: str, new: str) -> None:
    import re

    merged = merge_texts(old, new).casefold()
    kept = {w.casefold() for w in re.findall(r"\w+", old)}
    missing = {w for w in kept if w not in merged}
    assert len(missing) <= max(1, len(kept) // 10)


def test_thresholds_must_be_ordered() -> None:
    import pytest

    with pytest.raises(ValueError, match="gate thresholds"):
        GateConfig(create_below=0.8, update_min=0.75)
    GateConfig(create_below=0.97, update_min=0.98, reinforce_above=0.99)  # a strict gate is fine
